// The status file: replaced whole by rename, never written in place.
#include "runtime/status_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "runtime/records.h"
#include "util/stop_signals.h"
#include "util/fd_io.h"
#include "util/printable.h"

namespace sx {

namespace {

// What `path` names once its symbolic links are followed, existing or not: a
// rename replaces a link itself, so the file renamed over is the link's target.
std::string follow_links(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) break;
    fs::path to = fs::read_symlink(p, ec);
    if (ec) break;
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  return p.string();
}

// <name>.tmp-<pid> files beside the status file whose process is gone: what a
// run killed between writing its temporary file and renaming it leaves.
void remove_stale_temps(const std::string& target) {
  namespace fs = std::filesystem;
  fs::path t = target;
  std::string dir = t.parent_path().empty() ? "." : t.parent_path().string();
  std::string prefix = t.filename().string() + ".tmp-";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    std::string digits = name.substr(prefix.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    pid_t pid = static_cast<pid_t>(std::stol(digits));
    bool gone = pid == ::getpid() || (::kill(pid, 0) != 0 && errno == ESRCH);
    if (gone) ::unlink((fs::path(dir) / name).c_str());
  }
  ::closedir(d);
}

}  // namespace

StatusFile::StatusFile(const std::optional<std::string>& path, const std::string& source) : path_(path.value_or("")) {
  if (path_.empty()) return;
  target_ = follow_links(path_);
  struct stat st {};
  if (::stat(target_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    std::string shown = target_ == path_ ? path_ : fmt::format("{} (a link to {})", path_, target_);
    throw UserError(Code::ENV_010, {},
                    fmt::format("{}: expected a regular file or a new path, found {} at {}",
                                source.empty() ? "--status" : source, file_kind(st.st_mode), shown),
                    "the status file is replaced whole by a new one; name a file, such as run.status.json");
  }
  temp_ = target_ + ".tmp-" + std::to_string(::getpid());
  remove_stale_temps(target_);
}

void StatusFile::write(const Json& status, const Json* if_killed) {
  if (path_.empty()) return;
  std::string text = json_text(status) + "\n";
  int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = fd >= 0 && write_all(fd, text) && ::fsync(fd) == 0;
  if (fd >= 0) ::close(fd);
  ok = ok && std::rename(temp_.c_str(), target_.c_str()) == 0;
  if (!ok) {
    int err = errno;
    ::unlink(temp_.c_str());
    if (!warned_)
      std::cerr << one_line(fmt::format("warning: cannot write the status file {}: {}\n", path_, std::strerror(err)));
    warned_ = true;
    return;
  }
  if (if_killed) StopSignals::set_last_status(temp_, target_, json_text(*if_killed) + "\n");
}

}  // namespace sx
