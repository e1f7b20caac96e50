#pragma once
// Reading a checkpoint file or an :init-from file whole, safely: only a
// regular file is read (a FIFO would block forever, /dev/zero never ends), and
// its size is checked against the machine's memory before the first byte.
#include <optional>
#include <string>

namespace sx::ckpt {

struct FileRead {
  std::optional<std::string> bytes;  // the file; empty when it could not be opened or read
  int error = 0;                     // errno when bytes is empty: ENOENT, EACCES, ...
};

// Opens `path` without blocking (O_NONBLOCK: a FIFO opens at once), refuses
// with E-CKPT-054 what is not a regular file (a folder is error EISDIR) and with E-CKPT-055 one larger
// than physical memory (both naming `path`), and reads at most the size
// fstat gave. Other failures come back as `error`, for the caller's own code.
FileRead read_regular_file(const std::string& path);

}  // namespace sx::ckpt
