// Claiming the checkpoint location before the first step (location.h). A
// local run folder is locked with flock(2) on `<run folder>/.lock`: the kernel
// drops the lock when the process ends, however it ends, so a killed run never
// blocks its resume. S3 has no such thing; there the lock is an object with a
// lease (best effort, checkpoints.md says what it does and does not promise).
#include "checkpoint/location.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "checkpoint/checkpoint.h"
#include "util/error.h"
#include "util/fd_io.h"

namespace sx::ckpt {
namespace {

namespace fs = std::filesystem;

std::string this_host() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

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
  std::string me = fmt::format("pid {} on host {}\n", ::getpid(), this_host());
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
    int err = errno;
    ::close(fd);
    throw unusable(root, fmt::format("cannot write {}: {}", path, std::strerror(err)));
  }
  return std::make_unique<LocalLock>(fd);
}

// ---- any other store (S3): a lease object ----------------------------------

int64_t unix_now() {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

class LeaseLock final : public RunLock {
 public:
  LeaseLock(CheckpointStore& store, std::string id) : store_(store), id_(std::move(id)) {}
  ~LeaseLock() override {
    try {
      if (auto text = store_.read(kLockName, "holder"); text && text->find(id_) != std::string::npos)
        store_.remove(kLockName);
    } catch (const UserError&) {
      // The lease runs out by itself.
    }
  }
  void refresh() override {
    try {
      store_.put(kLockName, "holder", holder_text(id_));
    } catch (const UserError&) {
      // The next checkpoint tries again; the lease is long.
    }
  }

  static std::string holder_text(const std::string& id) {
    return nlohmann::json{{"pid", ::getpid()}, {"host", this_host()}, {"at", unix_now()}, {"id", id}}.dump() + "\n";
  }

 private:
  CheckpointStore& store_;
  std::string id_;
};

// Whether a lock object written by `holder` still keeps others out.
bool still_held(const nlohmann::json& holder) {
  if (!holder.is_object()) return false;
  auto num = [&](const char* k) -> int64_t {
    auto it = holder.find(k);
    return it != holder.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
  };
  auto host = holder.find("host");
  bool here = host != holder.end() && host->is_string() && host->get<std::string>() == this_host();
  int64_t pid = num("pid");
  if (here && pid > 0 && pid <= INT32_MAX) {
    if (pid == ::getpid()) return false;
    // On this host the holder's life decides, not the lease.
    return !(::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH);
  }
  return unix_now() - num("at") < kS3LockLeaseSeconds;
}

std::string describe_holder(const nlohmann::json& h) {
  auto text = [&](const char* k) {
    auto it = h.find(k);
    return it == h.end() ? std::string("?") : it->is_string() ? it->get<std::string>() : it->dump();
  };
  return fmt::format("pid {} on host {} (lock refreshed {} s ago)", text("pid"), text("host"),
                     h.contains("at") && h["at"].is_number_integer() ? unix_now() - h["at"].get<int64_t>() : -1);
}

std::unique_ptr<RunLock> lock_lease(CheckpointStore& store) {
  std::string where = store.where(kLockName);
  try {
    if (auto text = store.read(kLockName, "holder")) {
      auto holder = nlohmann::json::parse(*text, nullptr, false);
      if (still_held(holder)) throw held_by(store.where(), describe_holder(holder) + " holds " + where);
    }
    std::random_device rd;
    std::string id = fmt::format("{:08x}{:08x}", rd(), rd());
    store.put(kLockName, "holder", LeaseLock::holder_text(id));
    // Two runs starting together both wrote; the one whose object survived goes on.
    auto back = store.read(kLockName, "holder");
    if (back && back->find(id) == std::string::npos) {
      auto holder = nlohmann::json::parse(*back, nullptr, false);
      throw held_by(store.where(), describe_holder(holder) + " holds " + where);
    }
    return std::make_unique<LeaseLock>(store, id);
  } catch (const UserError& e) {
    if (e.code() == Code::CKPT_052) throw;
    throw unusable(store.where(), e.diagnostics().front().message);
  }
}

}  // namespace

std::unique_ptr<RunLock> claim_location(CheckpointStore& store, bool resuming) {
  std::unique_ptr<RunLock> lock;
  if (auto root = store.local_path()) {
    lock = lock_local(*root);
    probe(store);
  } else {
    probe(store);
    lock = lock_lease(store);
  }
  refuse_if_taken(store, resuming);
  return lock;
}

std::unique_ptr<RunLock> claim_location(const Location& location, const std::string& slug, bool resuming) {
  // The store outlives the claim: a lease lock refreshes and deletes through it.
  struct Owning final : RunLock {
    std::unique_ptr<CheckpointStore> store;
    std::unique_ptr<RunLock> lock;  // destroyed first
    void refresh() override { lock->refresh(); }
  };
  auto owning = std::make_unique<Owning>();
  owning->store = open_store(location, slug);
  owning->lock = claim_location(*owning->store, resuming);
  return owning;
}

}  // namespace sx::ckpt
