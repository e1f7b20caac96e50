// Finding and reading checkpoints. Nothing read is trusted: COMPLETE must be
// there and name state.json's SHA-256, state.json must have the fields and
// types the reader needs, and each tensor file must hash to what state.json
// says before it is parsed.
#include <filesystem>

#include "checkpoint/checkpoint.h"
#include "checkpoint/folders.h"
#include "s3/client.h"
#include "util/error.h"

namespace sx::ckpt {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kMaxDepth = 256;

UserError bad_state(const std::string& where, const std::string& what) {
  return UserError(Code::CKPT_024, {}, fmt::format("{}: {}", where, what),
                   "the checkpoint's state.json was changed or not written by "
                   "sexpgpu; resume from another checkpoint");
}

// A short rendering of a value for a message.
std::string shown(const Json& v) {
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

// The deepest nesting of arrays and objects in JSON text (strings skipped), so
// a hostile file cannot make the parser or a later dump recurse without bound.
int nesting(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

bool is_sha256(const Json& v) {
  if (!v.is_string()) return false;
  const auto& s = v.get_ref<const std::string&>();
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// A file name that stays inside the checkpoint folder.
bool plain_name(const std::string& name) {
  return !name.empty() && name[0] != '.' && name.find_first_of("/\\") == std::string::npos &&
         name.find('\0') == std::string::npos;
}

// COMPLETE holds "<sha256>  state.json\n" (sha256sum's format); the hash, or
// "".
std::string complete_hash(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
    text.remove_suffix(1);
  std::string expected_tail = std::string("  ") + kStateFile;
  if (text.size() != 64 + expected_tail.size() || !text.ends_with(expected_tail)) return {};
  std::string hash(text.substr(0, 64));
  return is_sha256(Json(hash)) ? hash : std::string{};
}

UserError corrupt(const std::string& path, const std::string& expected, const std::string& found) {
  return UserError(Code::CKPT_023, {},
                   fmt::format("{}: expected SHA-256 {}, found {}: the file "
                               "was truncated or changed after "
                               "the checkpoint was written",
                               path, expected, found),
                   "resume from another checkpoint");
}

}  // namespace

Json parse_state(std::string_view bytes, const std::string& where) {
  if (nesting(bytes) > kMaxDepth)
    throw bad_state(where, fmt::format("expected JSON nested at most {} deep", kMaxDepth));
  Json j = Json::parse(bytes.begin(), bytes.end(), nullptr,
                       /*allow_exceptions=*/false);
  if (j.is_discarded()) throw bad_state(where, "expected a JSON object, found text that is not JSON");
  if (!j.is_object()) throw bad_state(where, fmt::format("expected a JSON object, found {}", shown(j)));
  auto step = j.find("step");
  if (step == j.end()) throw bad_state(where, "expected a field step, found none");
  bool step_ok = (step->is_number_unsigned() && step->get<uint64_t>() <= INT64_MAX) ||
                 (step->is_number_integer() && step->get<int64_t>() >= 0);
  if (!step_ok)
    throw bad_state(where, fmt::format("expected step to be a non-negative integer, found {}", shown(*step)));
  auto files = j.find("files");
  if (files == j.end()) throw bad_state(where, "expected a field files, found none");
  if (!files->is_object())
    throw bad_state(
        where, fmt::format("expected files to be an object of name -> SHA-256, found {}", shown(*files)));
  for (const auto& [name, hash] : files->items()) {
    if (!plain_name(name))
      throw bad_state(where, fmt::format("expected a file name in files, found {}", shown(Json(name))));
    if (!is_sha256(hash))
      throw bad_state(
          where, fmt::format("expected files.{} to be 64 lowercase hex digits, found {}", name, shown(hash)));
  }
  for (const char* needed : {kModelFile, kOptimizerFile})
    if (!files->contains(needed))
      throw bad_state(where, fmt::format("expected files to name {}, found no entry", needed));
  return j;
}

std::optional<std::string> find_latest(const CheckpointStore& store) {
  // A complete step-<n>; a complete step-<n>.old-<pid> stands in while its
  // replacement is being renamed into place (a crash there leaves only it).
  std::optional<std::pair<FolderName, std::string>> best;
  auto better = [&](const FolderName& f) {
    if (!best) return true;
    if (f.step != best->first.step) return f.step > best->first.step;
    return f.kind == FolderKind::step && best->first.kind != FolderKind::step;
  };
  for (const std::string& name : store.list()) {
    auto f = parse_folder(name);
    if (!f || f->kind == FolderKind::partial || !better(*f)) continue;
    if (store.exists(name, kCompleteFile)) best = {*f, name};
  }
  if (!best) return std::nullopt;
  return best->second;
}

std::optional<std::string> find_latest(const Location& location, const std::string& slug) {
  auto store = open_store(location, slug);
  auto name = find_latest(*store);
  if (!name) return std::nullopt;
  return store->where(*name);
}

CheckpointData read_checkpoint(const CheckpointStore& store, const std::string& folder) {
  std::string where = store.where(folder);
  if (!store.exists(folder))
    throw UserError(Code::CKPT_021, {}, fmt::format("expected a checkpoint folder at {}, found none", where),
                    "a checkpoint is a step-<n> folder under <location>/<slug>/; --resume "
                    "latest finds the newest");
  auto complete = store.read(folder, kCompleteFile);
  if (!complete)
    throw UserError(Code::CKPT_022, {},
                    fmt::format("{} has no COMPLETE file: its writing was cut short, or it "
                                "is not a checkpoint",
                                where),
                    "resume from an earlier step-<n> folder, or use --resume latest");
  std::string state_path = where + "/" + kStateFile;
  auto state_bytes = store.read(folder, kStateFile);
  if (!state_bytes)
    throw UserError(Code::CKPT_023, {}, fmt::format("expected {}, found no such file", state_path));
  std::string recorded = complete_hash(*complete);
  if (recorded.empty())
    throw UserError(Code::CKPT_022, {},
                    fmt::format("{}/COMPLETE: expected \"<sha256>  state.json\", found {} "
                                "bytes of something else",
                                where, complete->size()));
  if (std::string actual = sha256_hex(*state_bytes); actual != recorded)
    throw corrupt(state_path, recorded, actual);

  Json state = parse_state(*state_bytes, state_path);
  int64_t step = state["step"].get<int64_t>();
  if (auto f = parse_folder(folder); f && f->step != step)
    throw UserError(
        Code::CKPT_025, {},
        fmt::format("{}: the folder says step {}, its state.json says step {}", where, f->step, step),
        fmt::format("rename the folder to step-{}, or resume from another checkpoint", step));

  CheckpointData data;
  data.step = step;
  for (const auto& [name, hash] : state["files"].items()) {
    std::string path = where + "/" + name;
    auto bytes = store.read(folder, name);
    if (!bytes) throw UserError(Code::CKPT_023, {}, fmt::format("expected {}, found no such file", path));
    if (std::string actual = sha256_hex(*bytes); actual != hash.get<std::string>())
      throw corrupt(path, hash.get<std::string>(), actual);
    if (name == kModelFile) data.model = st::decode(*bytes, path);
    if (name == kOptimizerFile) data.optimizer = st::decode(*bytes, path);
  }
  data.state = std::move(state);
  return data;
}

CheckpointData read_checkpoint(const std::string& dir) {
  if (s3::is_s3(dir)) {  // s3://bucket/prefix/slug/step-<n>
    s3::Address a = s3::parse_address(dir);
    std::string key = a.key;
    while (key.ends_with('/')) key.pop_back();
    size_t slash = key.rfind('/');
    std::string parent = slash == std::string::npos ? "" : key.substr(0, slash);
    auto client = s3::client_for(S3Role::checkpoint, "the checkpoint " + dir);
    auto store = s3_store(client, a.bucket, parent);
    return read_checkpoint(*store, key.substr(slash == std::string::npos ? 0 : slash + 1));
  }
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  std::filesystem::path p(d);
  std::string parent = p.has_parent_path() ? p.parent_path().string() : ".";
  std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..") {  // "/", ".", "..": a checkpoint is a named folder
    std::error_code ec;
    auto abs = std::filesystem::weakly_canonical(d, ec);
    if (!ec && abs.has_filename()) {
      parent = abs.parent_path().string();
      name = abs.filename().string();
    }
  }
  auto store = local_store(parent);
  return read_checkpoint(*store, name);
}

}  // namespace sx::ckpt
