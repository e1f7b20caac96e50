#include "data/shard_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "s3/client.h"
#include "util/error.h"
#include "util/fd_io.h"

namespace sx::data {
namespace {

class FileShardReader : public ShardReader {
 public:
  FileShardReader(std::string name, int fd, uint64_t size) : name_(std::move(name)), fd_(fd), size_(size) {}
  ~FileShardReader() override { ::close(fd_); }
  const std::string& name() const override { return name_; }
  uint64_t size() const override { return size_; }
  void read(uint64_t offset, size_t n, char* out) override {
    while (n > 0) {
      ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0)
        throw UserError(Code::DATA_013, {},
                        fmt::format("cannot read data file {} at byte {}: {}", name_, offset,
                                    got < 0 ? std::strerror(errno) : "unexpected end of file"));
      out += got, offset += static_cast<uint64_t>(got), n -= static_cast<size_t>(got);
    }
  }

 private:
  std::string name_;
  int fd_;
  uint64_t size_;
};

class MemoryShardReader : public ShardReader {
 public:
  MemoryShardReader(std::string name, std::string bytes) : name_(std::move(name)), bytes_(std::move(bytes)) {}
  const std::string& name() const override { return name_; }
  uint64_t size() const override { return bytes_.size(); }
  void read(uint64_t offset, size_t n, char* out) override {
    if (offset > bytes_.size() || n > bytes_.size() - offset)
      throw UserError(Code::DATA_013, {}, fmt::format("cannot read {} at byte {}: past its end", name_, offset));
    std::memcpy(out, bytes_.data() + offset, n);
  }

 private:
  std::string name_, bytes_;
};

// An S3 object read with ranged GETs, each at least kReadAhead bytes, one
// buffer kept: sequential reads cost one request per kReadAhead bytes.
class S3ShardReader : public ShardReader {
 public:
  static constexpr uint64_t kReadAhead = 8ull << 20;
  S3ShardReader(std::string name, std::shared_ptr<s3::Client> client, s3::Address a, uint64_t size)
      : name_(std::move(name)), client_(std::move(client)), addr_(std::move(a)), size_(size) {}
  const std::string& name() const override { return name_; }
  uint64_t size() const override { return size_; }
  void read(uint64_t offset, size_t n, char* out) override {
    if (offset > size_ || n > size_ - offset)
      throw UserError(
          Code::DATA_013, {},
          fmt::format("cannot read data file {} at byte {}: past its end ({} bytes)", name_, offset, size_));
    if (n == 0) return;
    if (offset < buf_start_ || offset + n > buf_start_ + buf_.size()) {
      uint64_t want = std::min<uint64_t>(std::max<uint64_t>(n, kReadAhead), size_ - offset);
      try {
        buf_ = client_->get_range(addr_.bucket, addr_.key, offset, want);
      } catch (const UserError& e) {
        const Diagnostic& d = e.diagnostics().front();
        throw UserError(
            Code::DATA_013, {},
            fmt::format("cannot read data file {} at byte {}: {} {}", name_, offset, code_info(d.code).name, d.message),
            d.help);
      }
      buf_start_ = offset;
    }
    std::memcpy(out, buf_.data() + (offset - buf_start_), n);
  }

 private:
  std::string name_;
  std::shared_ptr<s3::Client> client_;
  s3::Address addr_;
  uint64_t size_;
  std::string buf_;
  uint64_t buf_start_ = 0;
};

std::unique_ptr<ShardReader> open_s3_shard(const ShardRef& ref) {
  s3::Address a = s3::parse_address(ref.uri);
  auto client = s3::client_for(S3Role::data, "the data source " + ref.display);
  std::optional<s3::Object> head;
  try {
    head = client->head(a.bucket, a.key);
  } catch (const UserError& e) {
    const Diagnostic& d = e.diagnostics().front();
    throw UserError(Code::DATA_013, {},
                    fmt::format("cannot open data file {}: {} {}", ref.display, code_info(d.code).name, d.message),
                    d.help);
  }
  if (!head || a.key.empty()) throw UserError(Code::DATA_001, {}, fmt::format("data file {} not found", ref.display));
  return std::make_unique<S3ShardReader>(ref.display, client, a, head->size);
}

}  // namespace

std::unique_ptr<ShardReader> open_shard(const ShardRef& ref) {
  if (s3::is_s3(ref.uri)) return open_s3_shard(ref);
  // O_NONBLOCK: opening a FIFO must not wait for a writer; what is not a
  // regular file (a FIFO, /dev/zero, a socket) never ends or never starts, and
  // is refused before anything is read.
  int fd = ::open(ref.uri.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR)
      throw UserError(Code::DATA_001, {}, fmt::format("data file {} not found", ref.display),
                      "paths in :source are relative to the experiment file's directory");
    throw UserError(Code::DATA_013, {}, fmt::format("cannot open data file {}: {}", ref.display, std::strerror(err)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw UserError(Code::DATA_013, {}, fmt::format("cannot read data file {}: not a regular file", ref.display));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw UserError(Code::DATA_030, {},
                    fmt::format("data file {} is {}, not a regular file", ref.display, file_kind(st.st_mode)),
                    "a :source names regular files; copy a stream into a file first");
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return std::make_unique<FileShardReader>(ref.display, fd, static_cast<uint64_t>(st.st_size));
}

std::unique_ptr<ShardReader> memory_shard(std::string name, std::string bytes) {
  return std::make_unique<MemoryShardReader>(std::move(name), std::move(bytes));
}

std::string read_all(ShardReader& r, const std::atomic<bool>* stop) {
  // In chunks, so that a stopping signal cuts a long read (a slow disk, a
  // network filesystem, S3) short between two of them.
  constexpr uint64_t kChunk = 8ull << 20;
  std::string s(r.size(), '\0');
  for (uint64_t at = 0; at < s.size(); at += kChunk) {
    if (stop && stop->load(std::memory_order_relaxed))
      throw UserError(Code::DATA_013, {},
                      fmt::format("reading data file {} was cancelled by a stopping signal", r.name()));
    r.read(at, static_cast<size_t>(std::min<uint64_t>(kChunk, s.size() - at)), s.data() + at);
  }
  return s;
}

}  // namespace sx::data
