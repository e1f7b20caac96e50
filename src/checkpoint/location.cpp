// Claiming the checkpoint location before the first step (location.h). A
// local run folder is locked with flock(2) on `<run folder>/.lock`: the kernel
// drops the lock when the process ends, however it ends, so a killed run never
// blocks its resume. An S3 run folder is locked by a lease object (lock_s3.cpp).
#include "checkpoint/location.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "checkpoint/checkpoint.h"
#include "util/error.h"
#include "util/host_name.h"

namespace sx::ckpt {
namespace {

namespace fs = std::filesystem;

UserError unusable(const std::string& where, const std::string& why) {
  return UserError(Code::CKPT_050, {}, fmt::format("the checkpoint location {} cannot be used: {}", where, why),
                   "checked before the first step so the run does not train unprotected: give "
                   "--checkpoint-dir a writable folder (or a bucket the checkpoint role may write)");
}

// Writes a probe into the run folder and deletes it, through the store's own
// code, so what fails here is what would fail at the first checkpoint.
void probe(CheckpointStore& store) {
  std::string folder = ".probe-" + std::to_string(::getpid());
  try {
    store.put(folder, "probe", "sexpgpu checks that it can write here\n");
    store.remove(folder);
  } catch (const UserError& e) {
    throw unusable(store.where(), e.diagnostics().front().message);
  }
}

void refuse_if_taken(CheckpointStore& store, bool resuming) {
  if (resuming) return;
  auto latest = find_latest(store);
  if (!latest) return;
  throw UserError(Code::CKPT_051, {},
                  fmt::format("{} already holds checkpoints of a run with this slug (the newest: {}); a run "
                              "without --resume would mix its checkpoints with them",
                              store.where(), store.where(*latest)),
                  "continue that run with --resume latest, or give this run another slug (SEXPGPU_RUN_SLUG) or "
                  "another --checkpoint-dir");
}

UserError held_by(const std::string& where, const std::string& holder) {
  return UserError(Code::CKPT_052, {}, fmt::format("{} is in use by another run: {}", where, holder),
                   "wait for that run to end, or give this run another slug (SEXPGPU_RUN_SLUG) or another "
                   "--checkpoint-dir");
}

// ---- local: flock ----------------------------------------------------------

class LocalLock final : public RunLock {
 public:
  explicit LocalLock(int fd) : fd_(fd) {}
  ~LocalLock() override { ::close(fd_); }  // closing the last descriptor drops the lock

 private:
  int fd_;
};

std::string read_holder(int fd) {
  char buf[512] = {};
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string s(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s.empty() ? "a process that has not written its name yet" : s;
}

std::unique_ptr<RunLock> lock_local(const std::string& root) {
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw unusable(root, fmt::format("cannot create the folder: {}", ec.message()));
  if (!fs::is_directory(root, ec)) throw unusable(root, "it is not a folder");
  std::string path = root + "/" + kLockName;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) throw unusable(root, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    if (err == EWOULDBLOCK) {
      std::string holder = read_holder(fd);
      ::close(fd);
      throw held_by(root, holder + " holds " + path);
    }
    // A file system without flock (some network mounts): run unlocked rather than not at all.
  }
  std::string me = fmt::format("pid {} on host {}\n", ::getpid(), host_name());
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
    int err = errno;
    ::close(fd);
    throw unusable(root, fmt::format("cannot write {}: {}", path, std::strerror(err)));
  }
  return std::make_unique<LocalLock>(fd);
}

}  // namespace

std::unique_ptr<RunLock> claim_location(CheckpointStore& store, bool resuming) {
  std::unique_ptr<RunLock> lock;
  if (auto root = store.local_path()) lock = lock_local(*root);
  probe(store);  // before an S3 lock: a bad bucket or secret is E-CKPT-050, not a lock error
  if (!lock) lock = store.lock();
  refuse_if_taken(store, resuming);
  return lock;
}

std::unique_ptr<RunLock> claim_location(const Location& location, const std::string& slug, bool resuming) {
  auto store = open_store(location, slug);
  return claim_location(*store, resuming);
}

}  // namespace sx::ckpt
