#include "data/shard_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.h"

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
      throw UserError(Code::DATA_013, {},
                      fmt::format("cannot read {} at byte {}: past its end", name_, offset));
    std::memcpy(out, bytes_.data() + offset, n);
  }

 private:
  std::string name_, bytes_;
};

}  // namespace

std::unique_ptr<ShardReader> open_shard(const ShardRef& ref) {
  if (ref.uri.rfind("s3://", 0) == 0)
    throw UserError(
        Code::DATA_005, {},
        fmt::format("cannot read {}: s3:// data sources come in a later version of sexpgpu", ref.display),
        "copy the data to local disk and point :source at it");
  int fd = ::open(ref.uri.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR)
      throw UserError(Code::DATA_001, {}, fmt::format("data file {} not found", ref.display),
                      "paths in :source are relative to the experiment file's directory");
    throw UserError(Code::DATA_013, {},
                    fmt::format("cannot open data file {}: {}", ref.display, std::strerror(err)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw UserError(Code::DATA_013, {},
                    fmt::format("cannot read data file {}: not a regular file", ref.display));
  }
  return std::make_unique<FileShardReader>(ref.display, fd, static_cast<uint64_t>(st.st_size));
}

std::unique_ptr<ShardReader> memory_shard(std::string name, std::string bytes) {
  return std::make_unique<MemoryShardReader>(std::move(name), std::move(bytes));
}

std::string read_all(ShardReader& r) {
  std::string s(r.size(), '\0');
  if (!s.empty()) r.read(0, s.size(), s.data());
  return s;
}

}  // namespace sx::data
