#pragma once
// Writing to a file descriptor without losing bytes; naming what a path is.
#include <sys/types.h>

#include <string_view>

namespace sx {

// Writes all of `s`, retried over partial writes and EINTR; false (errno set)
// on any other failure. A regular file gets it in as few `write` calls as the
// kernel allows, so a short line is one call.
bool write_all(int fd, std::string_view s);

// What a file of mode `m` is, for "expected a regular file, found ...":
// "a directory", "a FIFO", "a character device", "a block device", "a socket".
const char* file_kind(mode_t m);

}  // namespace sx
