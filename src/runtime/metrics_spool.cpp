#include "runtime/metrics_spool.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "net/http.h"
#include "util/fd_io.h"

namespace sx::report {

std::string spool_root() {
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state && *state == '/') return std::string(state) + "/sexpgpu/spool";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.local/state/sexpgpu/spool";
}

std::string spool_dir(const std::string& root, const std::string& folder, const std::string& slug) {
  return root + "/" + net::percent_encode(folder, false) + "/" + net::percent_encode(slug, false);
}

SpoolFile::~SpoolFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool SpoolFile::open_locked(int flags) {
  int fd = ::open(path_.c_str(), flags | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return false;
  }
  fd_ = fd;
  return true;
}

bool SpoolFile::take_over() { return fd_ >= 0 || open_locked(O_RDWR | O_APPEND); }

std::vector<SpooledRecord> SpoolFile::read() const {
  std::vector<SpooledRecord> out;
  std::ifstream in(path_, std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = 0;
  while (at < all.size()) {
    size_t nl = all.find('\n', at);
    if (nl == std::string::npos) break;  // cut by a crash mid-line: never acknowledged, never queued
    std::string line = all.substr(at, nl - at + 1);
    at = nl + 1;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("seq") && j["seq"].is_number_integer())
      out.push_back({j["seq"].get<int64_t>(), std::move(line)});
  }
  return out;
}

bool SpoolFile::append(const std::string& line) {
  if (fd_ < 0) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
    if (!open_locked(O_WRONLY | O_CREAT | O_APPEND)) return false;
  }
  return write_all(fd_, line);
}

bool SpoolFile::rewrite(const std::deque<SpooledRecord>& records) {
  if (records.empty()) {
    if (fd_ >= 0) {
      ::unlink(path_.c_str());
      ::close(fd_);
      fd_ = -1;
    }
    return true;
  }
  // The new file is locked before it replaces the old one, so the lock is never let go.
  std::string tmp = path_ + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  std::string all;
  for (const auto& r : records) all += r.line;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 || !write_all(fd, all) || ::rename(tmp.c_str(), path_.c_str()) != 0) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return false;
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  return true;
}

}  // namespace sx::report
