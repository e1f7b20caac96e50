#include "util/stop_signals.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace sx {

namespace {
std::atomic<int> g_signal{0};
std::atomic<int64_t> g_signal_ns{0};
std::atomic<bool> g_flag{false};

// The status a second signal leaves, in two buffers: the session fills the one
// not published and then publishes it. Once the handler has begun (g_exiting),
// the session touches neither, so the one the handler reads is never changed.
struct LastStatus {
  std::string temp, target, text;
};
// Never destroyed: a signal can come while exit() runs the static destructors,
// and its handler must not read a freed string.
LastStatus* const g_last = new LastStatus[2];
std::atomic<int> g_published{-1};
std::atomic<bool> g_exiting{false};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Only async-signal-safe calls: open, write, fsync, close, rename.
void write_last_status() {
  int i = g_published.load();
  if (i < 0) return;
  const LastStatus& s = g_last[i];
  int fd = ::open(s.temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  size_t done = 0;
  while (done < s.text.size()) {
    ssize_t n = ::write(fd, s.text.data() + done, s.text.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  bool whole = done == s.text.size() && ::fsync(fd) == 0;
  ::close(fd);
  if (whole)
    ::rename(s.temp.c_str(), s.target.c_str());
  else
    ::unlink(s.temp.c_str());
}

void on_signal(int sig) {
  int expected = 0;
  if (g_signal.compare_exchange_strong(expected, sig)) {
    g_signal_ns.store(now_ns());
    g_flag.store(true);
    return;
  }
  // A second signal: leave now. Nothing half-written becomes visible: checkpoints
  // and the status file are renamed into place only when complete.
  if (!g_exiting.exchange(true)) write_last_status();
  _exit(128 + g_signal.load());
}
}  // namespace

void StopSignals::install() {
  static bool done = false;
  if (done) return;
  done = true;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigfillset(&sa.sa_mask);  // one handler at a time: a second signal waits for the first to be recorded
  sa.sa_flags = 0;          // no SA_RESTART: a blocking wait is cut short
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

int StopSignals::pending() { return g_signal.load(); }

const char* StopSignals::name(int sig) {
  switch (sig) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal";
  }
}

double StopSignals::since_signal() {
  int64_t t = g_signal_ns.load();
  return t == 0 ? 0.0 : static_cast<double>(now_ns() - t) / 1e9;
}

const std::atomic<bool>* StopSignals::flag() { return &g_flag; }

void StopSignals::set_last_status(const std::string& temp, const std::string& target, const std::string& text) {
  if (g_exiting.load()) return;
  int next = g_published.load() == 0 ? 1 : 0;
  g_last[next] = {temp, target, text};
  g_published.store(next);
}

void StopSignals::reset() {
  g_flag.store(false);
  g_signal.store(0);
  g_signal_ns.store(0);
}

}  // namespace sx
