// What a bundle holds: the files an experiment reads, each named relative to
// the experiment's folder, with its size and SHA-256.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>

#include "bundle/bundle.h"
#include "data/source.h"
#include "s3/client.h"
#include "util/sha256.h"
#include "util/version.h"

namespace sx::bundle {

namespace fs = std::filesystem;

namespace {

fs::path absolute_normal(const std::string& p) { return fs::absolute(fs::path(p)).lexically_normal(); }

struct Hashed {
  uint64_t bytes = 0;
  std::string sha256;
};

Hashed hash_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw UserError(Code::CLI_040, {}, fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw UserError(Code::CLI_041, {}, fmt::format("{} is not a regular file; a bundle holds only files", path));
  }
  Sha256 h;
  Hashed out;
  std::string buf(1 << 20, '\0');
  while (true) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      throw UserError(Code::CLI_040, {}, fmt::format("cannot read {}: {}", path, std::strerror(e)));
    }
    if (n == 0) break;
    h.add(std::string_view(buf.data(), static_cast<size_t>(n)));
    out.bytes += static_cast<uint64_t>(n);
  }
  ::close(fd);
  out.sha256 = h.hex();
  return out;
}

[[noreturn]] void absolute_path(const std::string& what, const std::string& path) {
  throw UserError(
      Code::CLI_041, {},
      fmt::format("{} is named by the absolute path {}, which would read another file on another machine", what, path),
      "name it relative to the experiment file");
}

class Collector {
 public:
  Collector(const std::string& file, bool no_data) : dir_(absolute_normal(file).parent_path()), no_data_(no_data) {}

  void add(const std::string& disk_path, const std::string& kind) {
    std::string rel = absolute_normal(disk_path).lexically_relative(dir_).generic_string();
    if (seen_.count(rel)) return;
    seen_[rel] = true;
    if (rel.empty() || !safe_relative(rel, SIZE_MAX))
      throw UserError(
          Code::CLI_041, {},
          fmt::format("{} cannot be named relative to the experiment's folder {}", disk_path, dir_.string()));
    ups_ = std::max(ups_, leading_ups(rel));
    Hashed h = hash_file(disk_path);
    if (no_data_ && kind == "data") {
      p_.manifest.references.push_back({rel, h.bytes, h.sha256});
      return;
    }
    p_.manifest.files.push_back({rel, member_name(rel), kind, h.bytes, h.sha256});
    p_.disk_paths.push_back(disk_path);
  }

  void add_s3(const std::string& uri) {
    if (seen_.count(uri)) return;
    seen_[uri] = true;
    s3::Address a = s3::parse_address(uri);
    auto obj = s3::client_for(S3Role::data, "bundling the data " + uri)->head(a.bucket, a.key);
    if (!obj) throw UserError(Code::DATA_001, {}, fmt::format("the data object {} does not exist", uri));
    p_.manifest.s3.push_back({uri, obj->size, obj->etag});
  }

  Packing finish() {
    // The folder keeps as many of the original names as the deepest `..` needs.
    std::vector<std::string> names;
    for (const auto& n : dir_) names.push_back(n.string());
    if (names.size() < ups_ + 1)
      throw UserError(Code::CLI_041, {},
                      fmt::format("a file lies above the root of the file system seen from {}", dir_.string()));
    std::string folder;
    for (size_t k = names.size() - ups_; k < names.size(); ++k) folder += (folder.empty() ? "" : "/") + names[k];
    p_.manifest.folder = folder;
    // Members in name order: the order of the manifest's list is the archive's.
    std::vector<size_t> order(p_.manifest.files.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return p_.manifest.files[a].member < p_.manifest.files[b].member; });
    Packing sorted{p_.manifest, {}};
    sorted.manifest.files.clear();
    for (size_t k : order) {
      sorted.manifest.files.push_back(p_.manifest.files[k]);
      sorted.disk_paths.push_back(p_.disk_paths[k]);
    }
    auto by_path = [](const auto& a, const auto& b) { return a.path < b.path; };
    std::sort(sorted.manifest.references.begin(), sorted.manifest.references.end(), by_path);
    std::sort(sorted.manifest.s3.begin(), sorted.manifest.s3.end(),
              [](const S3Object& a, const S3Object& b) { return a.uri < b.uri; });
    return sorted;
  }

  Packing& packing() { return p_; }

 private:
  fs::path dir_;
  bool no_data_;
  size_t ups_ = 0;
  std::map<std::string, bool> seen_;
  Packing p_;
};

bool ends_with(const std::string& s, const char* tail) { return s.ends_with(tail); }

}  // namespace

void check_s3_objects(const Manifest& m, const std::string& bundle) {
  for (const auto& o : m.s3) {
    s3::Address a = s3::parse_address(o.uri);
    auto now = s3::client_for(S3Role::data, "the bundle's data " + o.uri)->head(a.bucket, a.key);
    std::string differs = !now ? std::string("it does not exist any more")
                          : now->size != o.bytes
                              ? fmt::format("it is {} bytes now, {} when bundled", now->size, o.bytes)
                          : now->etag != o.etag ? fmt::format("its ETag is {} now, {} when bundled", now->etag, o.etag)
                                                : "";
    if (!differs.empty())
      throw UserError(Code::CLI_047, {},
                      fmt::format("the bundle {} reads {}, which changed: {}", bundle, o.uri, differs),
                      "the run would not read the same data: bundle the experiment again to run on the new data");
  }
}

Packing collect(const std::string& file, Interp& in, const Selection& sel, bool no_data) {
  for (const auto& path : in.absolute_requires) absolute_path("a required file", path);
  const Experiment& x = in.experiment();
  Collector c(file, no_data);
  Manifest& m = c.packing().manifest;
  m.made_by = SEXPGPU_VERSION;
  m.experiment = fs::path(file).filename().string();
  m.slug = x.slug;
  m.selection = sel;
  m.selection.env_diagnostics.reset();  // the environment of the run decides those
  c.add(file, "experiment");
  for (const auto& path : in.files_read) c.add(path, "source");
  std::string base_dir = fs::path(file).parent_path().string();
  for (const auto& l : x.loaders) {
    if (!l->finalized) continue;
    if (l->tokenizer && l->tokenizer->kind == "bpe") {
      const std::string& t = l->tokenizer->path;
      if (s3::is_s3(t))
        c.add_s3(t);
      else if (!t.empty() && t.front() == '/')
        absolute_path(fmt::format("the tokenizer of loader `{}`", l->name), t);
      else
        c.add(l->tokenizer->resolved_path, "tokenizer");
    }
    if (!l->source.empty() && l->source.front() == '/')
      absolute_path(fmt::format("the source of loader `{}`", l->name), l->source);
    bool manifest = ends_with(l->source, ".manifest") || ends_with(l->source, ".manifest.json");
    if (manifest && s3::is_s3(l->source))
      c.add_s3(l->source);
    else if (manifest)
      c.add(data::join_path(base_dir, l->source), "data");
    for (const auto& shard : data::resolve_source(l->source, base_dir)) {
      if (s3::is_s3(shard.uri))
        c.add_s3(shard.uri);
      else
        c.add(shard.uri, "data");
    }
  }
  return c.finish();
}

}  // namespace sx::bundle
