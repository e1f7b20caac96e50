#include "data/source.h"

#include <glob.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "s3/client.h"
#include "util/error.h"
#include "util/glob.h"

namespace sx::data {
namespace {

namespace fs = std::filesystem;

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool is_s3(const std::string& s) { return s.rfind("s3://", 0) == 0; }

std::string dir_of(const std::string& path) {
  if (is_s3(path)) return path.substr(0, path.rfind('/') + 1);  // "s3://b/dir/"
  return fs::path(path).parent_path().string();
}

std::string read_manifest(const std::string& path) {
  auto r = open_shard({path, path, {}, {}});
  if (r->size() > (64u << 20))
    throw UserError(Code::DATA_004, {}, fmt::format("manifest {} is larger than 64 MiB", path));
  return read_all(*r);
}

// A manifest's entry: s3:// as is; in a manifest in S3, a relative entry is a
// key beside it and an absolute one a local file.
ShardRef entry(const std::string& manifest, const std::string& uri) {
  if (is_s3(uri)) return {uri, uri, {}, {}};
  std::string p = join_path(dir_of(manifest), uri);
  return {p, p, {}, {}};
}

std::vector<ShardRef> line_manifest(const std::string& path) {
  std::string text = read_manifest(path);
  std::vector<ShardRef> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    line = line.substr(first, line.find_last_not_of(" \t\r") + 1 - first);
    out.push_back(entry(path, line));
  }
  return out;
}

std::vector<ShardRef> json_manifest(const std::string& path) {
  auto bad = [&](const std::string& what) {
    return UserError(Code::DATA_004, {}, fmt::format("bad manifest {}: {}", path, what),
                     R"(write {"shards": [{"uri": "shard-0.bin", "bytes": 1024, "sha256": "..."}]})");
  };
  nlohmann::json j = nlohmann::json::parse(read_manifest(path), nullptr, false);
  if (j.is_discarded()) throw bad("not valid JSON");
  if (!j.is_object() || !j.contains("shards") || !j["shards"].is_array())
    throw bad("expected an object with a \"shards\" array");
  std::vector<ShardRef> out;
  for (size_t i = 0; i < j["shards"].size(); ++i) {
    const auto& s = j["shards"][i];
    if (!s.is_object() || !s.contains("uri") || !s["uri"].is_string() || s["uri"].get<std::string>().empty())
      throw bad(fmt::format("shard {} needs a \"uri\" string", i));
    ShardRef ref = entry(path, s["uri"].get<std::string>());
    if (s.contains("bytes")) {
      if (!s["bytes"].is_number_unsigned())
        throw bad(fmt::format("shard {}: \"bytes\" must be a non-negative integer", i));
      ref.bytes = s["bytes"].get<uint64_t>();
    }
    if (s.contains("sha256")) {
      std::string h = s["sha256"].is_string() ? s["sha256"].get<std::string>() : "";
      std::transform(h.begin(), h.end(), h.begin(), [](unsigned char c) { return std::tolower(c); });
      if (h.size() != 64 || h.find_first_not_of("0123456789abcdef") != std::string::npos)
        throw bad(fmt::format("shard {}: \"sha256\" must be 64 hex digits", i));
      ref.sha256 = h;
    }
    out.push_back(std::move(ref));
  }
  return out;
}

std::vector<ShardRef> glob_source(const std::string& pattern) {
  glob_t g{};
  int rc = ::glob(pattern.c_str(), GLOB_NOSORT, nullptr, &g);
  std::vector<std::string> names;
  if (rc == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) names.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  if (names.empty())
    throw UserError(Code::DATA_001, {}, fmt::format("no data file matches {}", pattern),
                    "paths in :source are relative to the experiment file's directory");
  std::sort(names.begin(), names.end());  // name order, byte by byte, whatever the locale
  std::vector<ShardRef> out;
  for (auto& n : names) out.push_back({n, n, {}, {}});
  return out;
}

}  // namespace

std::string join_path(const std::string& dir, const std::string& rel) {
  if (is_s3(dir) && !fs::path(rel).is_absolute()) {
    s3::Address a = s3::parse_address(dir);
    std::string key = (fs::path(a.key) / rel).lexically_normal().string();
    return "s3://" + a.bucket + "/" + key;
  }
  fs::path p(rel);
  if (p.is_relative() && !dir.empty()) p = fs::path(dir) / p;
  return p.lexically_normal().string();
}

namespace {

// s3://b/dir/ (every object under it) or s3://b/dir/*.bin (LIST and match,
// '*' not crossing '/'), in key order.
std::vector<ShardRef> s3_objects(const std::string& source) {
  s3::Address a = s3::parse_address(source);
  size_t wild = a.key.find_first_of("*?[");
  std::string prefix = a.key.substr(0, wild);
  auto client = s3::client_for(S3Role::data, "the data source " + source);
  std::vector<ShardRef> out;
  for (const auto& o : client->list(a.bucket, prefix).objects) {
    if (o.key.ends_with('/')) continue;  // a folder marker
    if (wild != std::string::npos && !source_glob_match(a.key, o.key)) continue;
    std::string uri = "s3://" + a.bucket + "/" + o.key;
    out.push_back({uri, uri, {}, {}});
  }
  if (out.empty()) throw UserError(Code::DATA_001, {}, fmt::format("no data file matches {}", source));
  return out;
}

}  // namespace

std::vector<ShardRef> resolve_source(const std::string& source, const std::string& base_dir) {
  bool remote = is_s3(source);
  if (remote && !ends_with(source, ".manifest") && !ends_with(source, ".manifest.json")) {
    s3::parse_address(source);
    if (ends_with(source, "/") || source.find_first_of("*?[") != std::string::npos) return s3_objects(source);
    return {{source, source, {}, {}}};
  }
  std::string path = remote ? source : join_path(base_dir, source);
  std::vector<ShardRef> shards;
  if (ends_with(source, ".manifest.json")) {
    shards = json_manifest(path);
  } else if (ends_with(source, ".manifest")) {
    shards = line_manifest(path);
  } else if (source.find_first_of("*?[") != std::string::npos && !fs::exists(path)) {
    return glob_source(path);
  } else {
    return {{path, path, {}, {}}};
  }
  if (shards.empty()) throw UserError(Code::DATA_002, {}, fmt::format("manifest {} lists no shards", path));
  return shards;
}

}  // namespace sx::data
