// Reading a bundle that may be hostile: the manifest is read and checked
// first, and member names are never used as paths — each member must be the
// one the manifest lists, a regular file of the listed size, and is written
// (O_EXCL, no links followed) where the manifest's checked path says, inside a
// fresh private folder. Hashes are compared before anything of it runs.
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "bundle/bundle.h"
#include "util/sha256.h"

namespace sx::bundle {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void damaged(const std::string& bundle, const std::string& what) {
  throw UserError(Code::CLI_044, {}, fmt::format("the bundle {} is damaged: {}; nothing was run", bundle, what),
                  "copy the bundle again, or make it again with `sexpgpu bundle`");
}

[[noreturn]] void unsafe(const std::string& bundle, const std::string& what) {
  throw UserError(Code::CLI_045, {}, fmt::format("`{}` is not a safe bundle: {}; nothing was run", bundle, what),
                  "a bundle made by `sexpgpu bundle` never holds this: make it again from the experiment");
}

[[noreturn]] void not_a_bundle(const std::string& bundle, const std::string& what) {
  throw UserError(Code::CLI_042, {}, fmt::format("`{}` expected a sexpgpu bundle, found {}", bundle, what),
                  "make one with `sexpgpu bundle FILE.sx -o out.sxb`");
}

struct Archive {
  archive* a = archive_read_new();
  ~Archive() { archive_read_free(a); }
  std::string error() const { return archive_error_string(a) ? archive_error_string(a) : "unreadable"; }
};

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Reads the member, hashing it into `h` and writing it to `out_fd` (when >= 0)
// or appending it to `out`; E-CLI-044 unless it has exactly `expected` bytes.
void read_member(Archive& ar, const std::string& bundle, const std::string& name, uint64_t expected, Sha256& h,
                 int out_fd, std::string* out) {
  std::string buf(1 << 16, '\0');
  uint64_t total = 0;
  while (true) {
    la_ssize_t n = archive_read_data(ar.a, buf.data(), buf.size());
    if (n < 0) damaged(bundle, fmt::format("reading {}: {}", name, ar.error()));
    if (n == 0) break;
    total += static_cast<uint64_t>(n);
    if (total > expected)
      damaged(bundle, fmt::format("{} holds more than the {} bytes its manifest records", name, expected));
    std::string_view piece(buf.data(), static_cast<size_t>(n));
    h.add(piece);
    if (out) out->append(piece);
    for (size_t done = 0; out_fd >= 0 && done < piece.size();) {
      ssize_t w = ::write(out_fd, piece.data() + done, piece.size() - done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0)
        throw UserError(Code::CLI_040, {},
                        fmt::format("cannot extract {} from {}: {}", name, bundle, std::strerror(errno)));
      done += static_cast<size_t>(w);
    }
  }
  if (total != expected) damaged(bundle, fmt::format("{} is {} bytes, its manifest records {}", name, total, expected));
}

// The member's type and declared size, before any byte of it is read.
void check_header(archive_entry* e, const std::string& bundle, const std::string& name, uint64_t expected) {
  if (archive_entry_filetype(e) != AE_IFREG || archive_entry_hardlink(e) || archive_entry_symlink(e))
    unsafe(bundle, fmt::format("the member {} is not a regular file (a link, a folder or a device)", name));
  if (archive_entry_size_is_set(e) && static_cast<uint64_t>(archive_entry_size(e)) != expected)
    damaged(bundle, fmt::format("{} is {} bytes, its manifest records {}", name, archive_entry_size(e), expected));
}

// Before the manifest is read: a cut bundle is damaged, anything else is not one.
[[noreturn]] void unreadable(Archive& ar, const std::string& bundle) {
  std::string e = ar.error();
  if (e.find("runcated") != std::string::npos) damaged(bundle, "the archive ends early (" + e + ")");
  not_a_bundle(bundle, "a file that is not a zstd-compressed tar archive (" + e + ")");
}

void open_archive(Archive& ar, const std::string& bundle) {
  struct stat st {};
  if (::stat(bundle.c_str(), &st) != 0) not_a_bundle(bundle, fmt::format("no file ({})", std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) not_a_bundle(bundle, "something that is not a regular file");
  archive_read_support_filter_zstd(ar.a);
  archive_read_support_format_tar(ar.a);
  if (archive_read_open_filename(ar.a, bundle.c_str(), 1 << 16) != ARCHIVE_OK) unreadable(ar, bundle);
}

Manifest read_manifest(Archive& ar, const std::string& bundle) {
  archive_entry* e = nullptr;
  int rc = archive_read_next_header(ar.a, &e);
  if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) unreadable(ar, bundle);
  std::string name = archive_entry_pathname(e) ? archive_entry_pathname(e) : "";
  if (name != kManifestMember)
    not_a_bundle(bundle, fmt::format("an archive whose first member is `{}`, not {}", name, kManifestMember));
  if (archive_entry_filetype(e) != AE_IFREG) not_a_bundle(bundle, "a manifest.json that is not a file");
  if (archive_entry_size(e) < 0 || static_cast<uint64_t>(archive_entry_size(e)) > kMaxManifestBytes)
    unsafe(bundle,
           fmt::format("its manifest is {} bytes, over the limit of {}", archive_entry_size(e), kMaxManifestBytes));
  std::string text;
  Sha256 ignored;
  try {
    read_member(ar, bundle, name, static_cast<uint64_t>(archive_entry_size(e)), ignored, -1, &text);
  } catch (const UserError&) {
    unreadable(ar, bundle);
  }
  return parse_manifest(text, bundle);
}

// Creates the folders above `path`, inside `root`, none of them a link.
void make_parents(const fs::path& root, const fs::path& rel, const std::string& bundle) {
  fs::path at = root;
  fs::path parent = rel.parent_path();
  for (const auto& name : parent) {
    at /= name;
    struct stat st {};
    if (::lstat(at.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) unsafe(bundle, fmt::format("{} is both a file and a folder", rel.generic_string()));
      continue;
    }
    if (::mkdir(at.c_str(), 0700) != 0)
      throw UserError(Code::CLI_040, {}, fmt::format("cannot extract {}: {}", at.string(), std::strerror(errno)));
  }
}

// Where a manifest path lands, relative to the root (checked inside it by parse_manifest).
fs::path landing(const Manifest& m, const std::string& path) { return (fs::path(m.folder) / path).lexically_normal(); }

void link_references(const Manifest& m, const fs::path& root, const std::string& bundle) {
  fs::path beside = fs::absolute(fs::path(bundle)).parent_path();
  for (const auto& r : m.references) {
    fs::path source = (beside / r.path).lexically_normal();
    std::string shown = (fs::path(bundle).parent_path() / r.path).lexically_normal().string();
    auto refuse = [&](const std::string& what) {
      throw UserError(Code::CLI_046, {},
                      fmt::format("the bundle {} was made with --no-data and needs {} ({} bytes, SHA-256 {}...): {}",
                                  bundle, shown, r.bytes, r.sha256.substr(0, 12), what),
                      "put that file there, or make the bundle without --no-data");
    };
    int fd = ::open(source.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) refuse(std::strerror(errno));
    Fd guard{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) refuse("it is not a regular file");
    if (static_cast<uint64_t>(st.st_size) != r.bytes) refuse(fmt::format("it is {} bytes", st.st_size));
    Sha256 h;
    std::string buf(1 << 20, '\0');
    for (ssize_t n; (n = ::read(fd, buf.data(), buf.size())) != 0;) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) refuse(std::strerror(errno));
      h.add(std::string_view(buf.data(), static_cast<size_t>(n)));
    }
    if (std::string got = h.hex(); got != r.sha256) refuse(fmt::format("its SHA-256 is {}", got.substr(0, 12)));
    fs::path rel = landing(m, r.path);
    make_parents(root, rel, bundle);
    if (::symlink(source.c_str(), (root / rel).c_str()) != 0)
      unsafe(bundle, fmt::format("{} is listed twice ({})", r.path, std::strerror(errno)));
  }
}

}  // namespace

Extracted::~Extracted() {
  std::error_code ec;
  fs::remove_all(root_, ec);  // links are removed, never followed
}

std::string Extracted::experiment_path() const {
  return (fs::path(root_) / landing(manifest_, manifest_.experiment)).string();
}

std::unique_ptr<Extracted> extract(const std::string& bundle, const std::string& parent) {
  Archive ar;
  open_archive(ar, bundle);
  Manifest m = read_manifest(ar, bundle);
  std::string tmpl = (fs::path(parent) / "sexpgpu-bundle-XXXXXX").string();
  if (!::mkdtemp(tmpl.data()))
    throw UserError(
        Code::CLI_040, {},
        fmt::format("cannot make a folder to extract {} into under {}: {}", bundle, parent, std::strerror(errno)),
        "set TMPDIR to a writable folder");
  std::unique_ptr<Extracted> out(new Extracted);
  out->root_ = tmpl;  // from here on the folder is removed on any error
  out->manifest_ = m;
  std::map<std::string, const File*> by_member;
  for (const auto& f : m.files) by_member[f.member] = &f;
  fs::path root(out->root_);
  while (true) {
    archive_entry* e = nullptr;
    int rc = archive_read_next_header(ar.a, &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN)
      damaged(bundle, "the archive ends early or is corrupt (" + ar.error() + ")");
    std::string name = archive_entry_pathname(e) ? archive_entry_pathname(e) : "";
    auto it = by_member.find(name);
    if (it == by_member.end())
      unsafe(bundle, fmt::format("the member `{}` is not in its manifest, or is there twice", name));
    const File& f = *it->second;
    by_member.erase(it);
    check_header(e, bundle, name, f.bytes);
    fs::path rel = landing(m, f.path);
    make_parents(root, rel, bundle);
    int fd = ::open((root / rel).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) unsafe(bundle, fmt::format("{} cannot be extracted: {}", f.path, std::strerror(errno)));
    Fd guard{fd};
    Sha256 h;
    read_member(ar, bundle, f.path, f.bytes, h, fd, nullptr);
    if (std::string got = h.hex(); got != f.sha256)
      damaged(bundle, fmt::format("{} has SHA-256 {}, its manifest records {}", f.path, got, f.sha256));
  }
  if (!by_member.empty())
    damaged(bundle, fmt::format("{} is missing from the archive", by_member.begin()->second->path));
  link_references(m, root, bundle);
  return out;
}

}  // namespace sx::bundle
