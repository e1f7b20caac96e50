// The lock of an S3 run folder: the object `<run folder>/.lock`, a lease.
// S3 has no lock that dies with its process, so the object says who holds it
// and until when: {"pid", "host", "since", "expires", "token"}. It is created
// with a conditional PUT (If-None-Match: *), renewed by its holder with
// If-Match on its own etag, and deleted at the end of the run. A lock whose
// lease has run out, or whose holder is a dead process on this host (a
// kill -9; the same boot and pid namespace, not only the same host name), is
// stale and taken over (If-Match on the stale object's etag, so
// of two runs taking it over at once one wins).
//
// A conditional request that was applied but whose answer was lost is retried
// and then answers 412: every 412 is checked by reading the object back and
// comparing its token with ours.
#include "checkpoint/lock_s3.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "s3/client.h"
#include "util/error.h"
#include "util/host_name.h"
#include "util/printable.h"

namespace sx::ckpt {
namespace {

using Clock = std::chrono::system_clock;

int64_t now_s() { return std::chrono::duration_cast<std::chrono::seconds>(Clock::now().time_since_epoch()).count(); }

std::string utc(int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string random_token() {
  std::random_device rd;
  std::mt19937_64 g((static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(::getpid()));
  return fmt::format("{:016x}{:016x}", g(), g());
}

std::string read_line(const char* path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

// Which process table a pid is in: this boot of this machine, this pid
// namespace. Containers sharing a host name (host networking) differ here.
std::string process_table() {
  struct stat st {};
  std::string ns = ::stat("/proc/self/ns/pid", &st) == 0 ? std::to_string(st.st_ino) : "";
  return read_line("/proc/sys/kernel/random/boot_id") + "/" + ns;
}

// What a lock object says; `readable` false for one that is not a lock sexpgpu wrote.
struct Holder {
  bool readable = false;
  int64_t pid = 0, since = 0, expires = 0;
  std::string host, token, processes;
};

Holder parse(const std::string& text) {
  Holder h;
  try {
    auto j = nlohmann::json::parse(text);
    h.pid = j.at("pid").get<int64_t>();
    h.host = j.at("host").get<std::string>();
    h.since = j.at("since").get<int64_t>();
    h.expires = j.at("expires").get<int64_t>();
    h.token = j.at("token").get<std::string>();
    h.processes = j.value("processes", "");
    h.readable = true;
  } catch (const std::exception&) {
  }
  return h;
}

std::string describe(const Holder& h) {
  return fmt::format("pid {} on host {} (since {}, lease until {})", h.pid, h.host, utc(h.since), utc(h.expires));
}

// Why `h` no longer holds the location, or "" while it does.
std::string stale_reason(const Holder& h, int64_t now) {
  if (h.expires < now) return fmt::format("its lease ran out at {}", utc(h.expires));
  // A pid is looked up only in the process table it belongs to.
  if (h.host == host_name() && !h.processes.empty() && h.processes == process_table() && h.pid > 0 &&
      ::kill(static_cast<pid_t>(h.pid), 0) != 0 && errno == ESRCH)
    return fmt::format("process {} is gone from this host", h.pid);
  return {};
}

class S3Lock final : public RunLock {
 public:
  S3Lock(std::shared_ptr<s3::Client> client, std::string bucket, std::string key, std::string where, int64_t lease_s)
      : client_(std::move(client)),
        bucket_(std::move(bucket)),
        key_(std::move(key)),
        where_(std::move(where)),
        lease_s_(lease_s) {
    me_.pid = ::getpid();
    me_.host = host_name();
    me_.since = now_s();
    me_.token = random_token();
    me_.processes = process_table();
  }

  ~S3Lock() override {
    if (etag_.empty()) return;
    try {  // deleted only while it is still ours: a lock taken over since is the new holder's
      auto got = client_->get_with_etag(bucket_, key_);
      if (got && parse(got->first).token == me_.token) client_->remove(bucket_, key_);
    } catch (const UserError& e) {
      std::cerr << one_line(
          fmt::format("warning: cannot delete the lock {}: {}; the next run on this host takes it "
                      "over, one elsewhere when its lease runs out\n",
                      where_, e.diagnostics().front().message));
    } catch (...) {  // nothing leaves a destructor
    }
  }

  // Takes the lock, or throws E-CKPT-052 naming the holder.
  void acquire() {
    for (int round = 0; round < 4; ++round) {
      if (put({})) return;
      auto got = client_->get_with_etag(bucket_, key_);
      if (!got) continue;  // deleted in between: try again
      Holder h = parse(got->first);
      if (h.readable && h.token == me_.token) return adopt(got->second);  // our own PUT, its answer lost
      if (!h.readable)
        throw UserError(Code::CKPT_052, {},
                        fmt::format("{} holds {}, which is not a lock sexpgpu wrote", where_, printable(got->first)),
                        "if no run uses this location, delete that object and start again");
      std::string why = stale_reason(h, now_s());
      if (why.empty())
        throw UserError(Code::CKPT_052, {},
                        fmt::format("{} is in use by another run: {} holds {}", dir(), describe(h), where_),
                        "wait for that run to end, or give this run another slug (SEXPGPU_RUN_SLUG) or another "
                        "--checkpoint-dir");
      if (put(got->second)) {
        std::cerr << one_line(fmt::format("warning: took over the lock {} of {}: {}\n", where_, describe(h), why));
        return;
      }
      // Someone else took it over first, or it changed: look again.
    }
    throw UserError(Code::CKPT_052, {},
                    fmt::format("{} changed hands four times while this run tried to lock it", where_),
                    "another run is starting on the same location and slug; wait for it, or choose another slug");
  }

  void renew() override {
    if (now_s() - renewed_at_ >= lease_s_ / 4) refresh();  // long before it runs out, and rarely
  }

  void confirm() override { refresh(); }

 private:
  // Writes the lease again. S3 out of reach is a warning: the run goes on (its
  // checkpoints say more if it stays so) and tries again at the next boundary.
  void refresh() {
    std::optional<std::pair<std::string, std::string>> got;
    try {
      if (put(etag_)) return;
      got = client_->get_with_etag(bucket_, key_);
    } catch (const UserError& e) {
      if (!warned_)
        std::cerr << one_line(
            fmt::format("warning: cannot renew the lock {}: {}\n", where_, e.diagnostics().front().message));
      warned_ = true;
      return;
    }
    Holder h = got ? parse(got->first) : Holder{};
    if (h.readable && h.token == me_.token) return adopt(got->second);  // our write, its answer lost
    etag_.clear();                                                      // not ours any more: never deleted by this run
    throw UserError(Code::CKPT_056, {},
                    fmt::format("this run lost the lock {}: {}", where_,
                                h.readable ? "it is held by " + describe(h) : "it was deleted"),
                    "another run took the location over after this run's lease ran out (the run was stopped or "
                    "cut off from S3 for longer than the lease); the checkpoints written so far are intact");
  }

  std::string dir() const { return where_.substr(0, where_.rfind('/')); }

  void adopt(const std::string& etag) {
    etag_ = etag;
    renewed_at_ = now_s();
    warned_ = false;
  }

  // Writes our lock over the object with etag `if_etag` (empty: none there).
  bool put(const std::string& if_etag) {
    int64_t now = now_s();
    Holder next = me_;
    next.expires = now + lease_s_;
    nlohmann::json j = {{"pid", next.pid},         {"host", next.host},   {"since", next.since},
                        {"expires", next.expires}, {"token", next.token}, {"processes", next.processes},
                        {"written", utc(now)}};
    auto etag = client_->put_if(bucket_, key_, j.dump() + "\n", if_etag);
    if (!etag) return false;
    adopt(*etag);
    return true;
  }

  std::shared_ptr<s3::Client> client_;
  std::string bucket_, key_, where_;
  int64_t lease_s_;
  Holder me_;
  std::string etag_;  // of our lock object; empty while we do not hold it
  int64_t renewed_at_ = 0;
  bool warned_ = false;
};

}  // namespace

std::unique_ptr<RunLock> lock_s3(std::shared_ptr<s3::Client> client, const std::string& bucket, const std::string& key,
                                 const std::string& where, int64_t lease_s) {
  auto lock = std::make_unique<S3Lock>(std::move(client), bucket, key, where, lease_s);
  lock->acquire();
  return lock;
}

}  // namespace sx::ckpt
