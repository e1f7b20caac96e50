#include "checkpoint/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "util/error.h"
#include "util/fd_io.h"
#include "util/memory.h"

namespace sx::ckpt {

FileRead read_regular_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return {std::nullopt, errno};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return {std::nullopt, err};
  }
  if (S_ISDIR(st.st_mode)) {  // the callers' own "is a directory" errors
    ::close(fd);
    return {std::nullopt, EISDIR};
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw UserError(Code::CKPT_054, {}, fmt::format("{}: expected a regular file, found {}", path, file_kind(st.st_mode)),
                    "point at a file on disk; sexpgpu does not read from pipes or devices");
  }
  uint64_t size = static_cast<uint64_t>(st.st_size), limit = physical_memory();
  if (size > limit) {
    ::close(fd);
    throw UserError(Code::CKPT_055, {},
                    fmt::format("{}: {} bytes, more than this machine's memory ({} bytes)", path, size, limit));
  }
  std::string out(static_cast<size_t>(size), '\0');
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return {std::nullopt, err};
    }
    if (n == 0) break;  // shorter than fstat said: changed under us, the hash check will tell
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  ::close(fd);
  return {std::move(out), 0};
}

}  // namespace sx::ckpt
