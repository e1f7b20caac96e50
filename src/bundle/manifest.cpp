#include "bundle/manifest.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "util/error.h"

namespace sx::bundle {

using json = nlohmann::ordered_json;

namespace {

std::vector<std::string_view> names_of(std::string_view path) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t slash = path.find('/', start);
    out.push_back(path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) return out;
    start = slash + 1;
  }
}

json optional_int(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }
json optional_text(const std::optional<std::string>& v) { return v ? json(*v) : json(nullptr); }

[[noreturn]] void not_a_manifest(const std::string& bundle, const std::string& what) {
  throw UserError(Code::CLI_042, {}, fmt::format("`{}` expected a sexpgpu bundle manifest, found {}", bundle, what),
                  "make the bundle with `sexpgpu bundle FILE.sx -o out.sxb`");
}

[[noreturn]] void unsafe(const std::string& bundle, const std::string& what) {
  throw UserError(Code::CLI_045, {}, fmt::format("`{}` is not a safe bundle: {}; nothing was run", bundle, what),
                  "a bundle made by `sexpgpu bundle` never holds this: make it again from the experiment");
}

// The accessors throw E-CLI-042 naming the key, for any JSON that is not a manifest.
struct Reader {
  const std::string& bundle;
  const json& at(const json& j, const char* key, json::value_t type) const {
    if (!j.is_object() || !j.contains(key)) not_a_manifest(bundle, fmt::format("no `{}`", key));
    const json& v = j.at(key);
    bool ok = v.type() == type || (type == json::value_t::number_unsigned && v.is_number_integer() && v >= 0);
    if (!ok) not_a_manifest(bundle, fmt::format("`{}` of type {}", key, v.type_name()));
    return v;
  }
  std::string text(const json& j, const char* key) const {
    return at(j, key, json::value_t::string).get<std::string>();
  }
  uint64_t count(const json& j, const char* key) const {
    return at(j, key, json::value_t::number_unsigned).get<uint64_t>();
  }
  std::optional<std::string> maybe_text(const json& j, const char* key) const {
    if (j.contains(key) && j.at(key).is_null()) return std::nullopt;
    return text(j, key);
  }
  std::optional<int64_t> maybe_int(const json& j, const char* key) const {
    if (j.contains(key) && j.at(key).is_null()) return std::nullopt;
    uint64_t v = count(j, key);
    if (v > static_cast<uint64_t>(INT64_MAX)) not_a_manifest(bundle, fmt::format("`{}` out of range", key));
    return static_cast<int64_t>(v);
  }
};

bool is_sha256(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

size_t leading_ups(std::string_view path) {
  size_t n = 0;
  for (auto name : names_of(path)) {
    if (name != "..") break;
    ++n;
  }
  return n;
}

bool safe_relative(std::string_view path, size_t ups) {
  if (path.empty() || path.size() > 4096 || path.front() == '/' || path.find('\0') != std::string_view::npos)
    return false;
  size_t k = 0;
  for (auto name : names_of(path)) {
    bool up = name == "..";
    if (up && (k >= ups)) return false;
    if (name.empty() || name == "." || name.size() > 255) return false;
    k = up ? k + 1 : SIZE_MAX;  // `..` only before the first plain name
  }
  return names_of(path).back() != "..";
}

std::string member_name(const std::string& path) {
  std::string out = "files";
  for (auto name : names_of(path)) out += name == ".." ? std::string("/_up") : "/" + std::string(name);
  return out;
}

std::string to_json(const Manifest& m) {
  json sets = json::array();
  for (const auto& [k, v] : m.selection.sets) sets.push_back(json::array({k, v}));
  json files = json::array(), refs = json::array(), s3 = json::array();
  for (const auto& f : m.files)
    files.push_back(
        {{"path", f.path}, {"member", f.member}, {"kind", f.kind}, {"bytes", f.bytes}, {"sha256", f.sha256}});
  for (const auto& r : m.references) refs.push_back({{"path", r.path}, {"bytes", r.bytes}, {"sha256", r.sha256}});
  for (const auto& o : m.s3) s3.push_back({{"uri", o.uri}, {"bytes", o.bytes}, {"etag", o.etag}});
  json j = {
      {"format", kFormatName},
      {"version", m.version},
      {"sexpgpu", m.made_by},
      {"experiment", m.experiment},
      {"folder", m.folder},
      {"slug", m.slug},
      {"selection",
       {{"variant", m.selection.variant.empty() ? json(nullptr) : json(m.selection.variant)},
        {"sets", sets},
        {"steps", optional_int(m.selection.steps)},
        {"eval_every", optional_int(m.selection.eval_every)},
        {"diagnostics", optional_text(m.selection.diagnostics)},
        {"slug_base", optional_text(m.selection.slug_base)}}},
      {"files", files},
      {"data_references", refs},
      {"s3", s3},
  };
  return j.dump(1) + "\n";
}

Manifest parse_manifest(std::string_view text, const std::string& bundle) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) not_a_manifest(bundle, "a manifest.json that is not a JSON object");
  Reader r{bundle};
  if (r.text(j, "format") != kFormatName) not_a_manifest(bundle, fmt::format("format `{}`", r.text(j, "format")));
  Manifest m;
  uint64_t version = r.count(j, "version");
  if (version != static_cast<uint64_t>(kFormatVersion))
    throw UserError(Code::CLI_043, {},
                    fmt::format("`{}` is a bundle of format version {}; this sexpgpu reads version {}", bundle, version,
                                kFormatVersion),
                    fmt::format("make the bundle again with this sexpgpu, or run it with sexpgpu {}",
                                j.contains("sexpgpu") && j["sexpgpu"].is_string() ? j["sexpgpu"].get<std::string>()
                                                                                  : "of that version"));
  m.made_by = r.text(j, "sexpgpu");
  m.experiment = r.text(j, "experiment");
  m.folder = r.text(j, "folder");
  m.slug = r.text(j, "slug");
  const json& sel = r.at(j, "selection", json::value_t::object);
  m.selection.variant = r.maybe_text(sel, "variant").value_or("");
  for (const auto& kv : r.at(sel, "sets", json::value_t::array)) {
    if (!kv.is_array() || kv.size() != 2 || !kv[0].is_string() || !kv[1].is_string())
      not_a_manifest(bundle, "a `sets` item that is not [knob, value]");
    m.selection.sets.emplace_back(kv[0].get<std::string>(), kv[1].get<std::string>());
  }
  m.selection.steps = r.maybe_int(sel, "steps");
  m.selection.eval_every = r.maybe_int(sel, "eval_every");
  m.selection.diagnostics = r.maybe_text(sel, "diagnostics");
  m.selection.slug_base = r.maybe_text(sel, "slug_base");

  // Where every path lands is checked here, before anything is extracted.
  if (!m.folder.empty() && !safe_relative(m.folder)) unsafe(bundle, fmt::format("its folder is `{}`", m.folder));
  if (m.experiment.find('/') != std::string::npos || !safe_relative(m.experiment))
    unsafe(bundle, fmt::format("its experiment is `{}`", m.experiment));
  size_t depth = m.folder.empty() ? 0 : names_of(m.folder).size();
  std::set<std::string> paths, members;
  auto claim = [&](const std::string& path) {
    if (!safe_relative(path, depth)) unsafe(bundle, fmt::format("a file's path is `{}`", path));
    if (!paths.insert(path).second) unsafe(bundle, fmt::format("it lists `{}` twice", path));
  };
  const json& files = r.at(j, "files", json::value_t::array);
  const json& refs = r.at(j, "data_references", json::value_t::array);
  if (files.size() + refs.size() > kMaxFiles)
    unsafe(bundle, fmt::format("it lists {} files, more than {}", files.size() + refs.size(), kMaxFiles));
  bool has_experiment = false;
  for (const auto& f : files) {
    File file{r.text(f, "path"), r.text(f, "member"), r.text(f, "kind"), r.count(f, "bytes"), r.text(f, "sha256")};
    claim(file.path);
    if (file.member != member_name(file.path) || !members.insert(file.member).second)
      unsafe(bundle, fmt::format("`{}` is stored as `{}`", file.path, file.member));
    if (!is_sha256(file.sha256))
      not_a_manifest(bundle, fmt::format("the SHA-256 of `{}` as `{}`", file.path, file.sha256));
    has_experiment |= file.kind == "experiment" && file.path == m.experiment;
    m.files.push_back(std::move(file));
  }
  if (!has_experiment) not_a_manifest(bundle, fmt::format("no file for its experiment `{}`", m.experiment));
  for (const auto& f : refs) {
    Reference ref{r.text(f, "path"), r.count(f, "bytes"), r.text(f, "sha256")};
    claim(ref.path);
    if (!is_sha256(ref.sha256))
      not_a_manifest(bundle, fmt::format("the SHA-256 of `{}` as `{}`", ref.path, ref.sha256));
    m.references.push_back(std::move(ref));
  }
  for (const auto& o : r.at(j, "s3", json::value_t::array))
    m.s3.push_back({r.text(o, "uri"), r.count(o, "bytes"), r.text(o, "etag")});
  return m;
}

}  // namespace sx::bundle
