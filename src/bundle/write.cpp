// The archive's bytes depend on nothing but the files: members in the
// manifest's order, each with mtime 0, uid/gid 0, no owner names, mode 0644.
// libarchive writes the tar; the zstd frame is made here, with its checksum
// on (libarchive's zstd filter has no such option), so that any changed byte
// of the compressed file is refused even where it would decode to tar padding.
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "bundle/bundle.h"
#include "util/sha256.h"

namespace sx::bundle {

namespace {

[[noreturn]] void not_written(const std::string& out, const std::string& why) {
  throw UserError(Code::CLI_040, {}, fmt::format("cannot write the bundle {}: {}", out, why),
                  "give a writable path with -o");
}

// The compressed stream into the temporary file, fed by libarchive's callbacks.
struct ZstdFile {
  int fd = -1;
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  std::string out = std::string(ZSTD_CStreamOutSize(), '\0');
  std::string error;
  ~ZstdFile() {
    ZSTD_freeCCtx(cctx);
    if (fd >= 0) ::close(fd);
  }
  bool put(const char* p, size_t n) {
    while (n > 0) {
      ssize_t w = ::write(fd, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return error = std::strerror(errno), false;
      p += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }
  // Compresses `n` bytes (ZSTD_e_continue), or ends the frame (ZSTD_e_end).
  bool feed(const void* p, size_t n, ZSTD_EndDirective mode) {
    ZSTD_inBuffer in{p, n, 0};
    while (true) {
      ZSTD_outBuffer o{out.data(), out.size(), 0};
      size_t left = ZSTD_compressStream2(cctx, &o, &in, mode);
      if (ZSTD_isError(left)) return error = ZSTD_getErrorName(left), false;
      if (!put(out.data(), o.pos)) return false;
      if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size) return true;
    }
  }
  static la_ssize_t write_cb(archive*, void* self, const void* p, size_t n) {
    return static_cast<ZstdFile*>(self)->feed(p, n, ZSTD_e_continue) ? static_cast<la_ssize_t>(n) : -1;
  }
  static int close_cb(archive*, void* self) {
    auto* z = static_cast<ZstdFile*>(self);
    return z->feed(nullptr, 0, ZSTD_e_end) && ::fsync(z->fd) == 0 ? ARCHIVE_OK : ARCHIVE_FATAL;
  }
};

class Writer {
 public:
  Writer(const std::string& out, const std::string& tmp) : out_(out), a_(archive_write_new()) {
    z_.fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (z_.fd < 0) not_written(out_, std::strerror(errno));
    if (ZSTD_isError(ZSTD_CCtx_setParameter(z_.cctx, ZSTD_c_compressionLevel, 3)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(z_.cctx, ZSTD_c_checksumFlag, 1)))
      not_written(out_, "zstd refused its parameters");
    if (archive_write_set_format_pax_restricted(a_) != ARCHIVE_OK ||
        archive_write_open2(a_, &z_, nullptr, ZstdFile::write_cb, ZstdFile::close_cb, nullptr) != ARCHIVE_OK)
      fail();
  }
  ~Writer() {
    if (a_) archive_write_free(a_);
  }

  void header(const std::string& name, uint64_t bytes) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, name.c_str());
    archive_entry_set_size(e, static_cast<la_int64_t>(bytes));
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_mtime(e, 0, 0);
    archive_entry_set_uid(e, 0);
    archive_entry_set_gid(e, 0);
    int rc = archive_write_header(a_, e);
    archive_entry_free(e);
    if (rc != ARCHIVE_OK) fail();
  }
  void data(std::string_view bytes) {
    if (archive_write_data(a_, bytes.data(), bytes.size()) != static_cast<la_ssize_t>(bytes.size())) fail();
  }
  void close() {
    if (archive_write_close(a_) != ARCHIVE_OK) fail();
  }

 private:
  [[noreturn]] void fail() {
    not_written(out_, !z_.error.empty()          ? z_.error
                      : archive_error_string(a_) ? archive_error_string(a_)
                                                 : "libarchive failed");
  }
  std::string out_;
  ZstdFile z_;
  archive* a_;
};

// Copies the file into the archive, checking it is still what was hashed.
void copy_file(Writer& w, const std::string& disk, const File& f, const std::string& out) {
  int fd = ::open(disk.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw UserError(Code::CLI_040, {}, fmt::format("cannot read {}: {}", disk, std::strerror(errno)));
  Sha256 h;
  uint64_t total = 0;
  std::string buf(1 << 20, '\0');
  while (true) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    size_t take = static_cast<size_t>(std::min<uint64_t>(static_cast<uint64_t>(n), f.bytes - std::min(f.bytes, total)));
    w.data(std::string_view(buf.data(), take));
    h.add(std::string_view(buf.data(), static_cast<size_t>(n)));
    total += static_cast<uint64_t>(n);
  }
  ::close(fd);
  if (total != f.bytes || h.hex() != f.sha256)
    not_written(out, fmt::format("{} changed while it was being bundled; run `sexpgpu bundle` again", disk));
}

}  // namespace

void write_bundle(const std::string& out, const Packing& p) {
  namespace fs = std::filesystem;
  std::string tmp = out + fmt::format(".tmp-{}", ::getpid());
  struct RemoveTmp {
    std::string path;
    bool keep = false;
    ~RemoveTmp() {
      if (!keep) ::unlink(path.c_str());
    }
  } guard{tmp};
  {
    Writer w(out, tmp);
    std::string manifest = to_json(p.manifest);
    w.header(kManifestMember, manifest.size());
    w.data(manifest);
    for (size_t k = 0; k < p.manifest.files.size(); ++k) {
      const File& f = p.manifest.files[k];
      w.header(f.member, f.bytes);
      copy_file(w, p.disk_paths[k], f, out);
    }
    w.close();
  }
  std::error_code ec;
  fs::rename(tmp, out, ec);
  if (ec) not_written(out, ec.message());
  guard.keep = true;
}

}  // namespace sx::bundle
