#include "runtime/signals.h"

#include <unistd.h>

#include <cstdlib>

namespace sx {

namespace {
std::atomic<int> g_signal{0};
std::atomic<int64_t> g_signal_ns{0};
std::atomic<bool> g_flag{false};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void on_signal(int sig) {
  int expected = 0;
  if (g_signal.compare_exchange_strong(expected, sig)) {
    g_signal_ns.store(now_ns());
    g_flag.store(true);
    return;
  }
  // A second signal: leave now. _exit is async-signal-safe; nothing half-written
  // becomes visible because checkpoints are renamed into place only when complete.
  _exit(128 + g_signal.load());
}
}  // namespace

void StopSignals::install() {
  static bool done = false;
  if (done) return;
  done = true;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking wait is cut short
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);
}

int StopSignals::pending() { return g_signal.load(); }

const char* StopSignals::name(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    default: return "signal";
  }
}

double StopSignals::since_signal() {
  int64_t t = g_signal_ns.load();
  return t == 0 ? 0.0 : static_cast<double>(now_ns() - t) / 1e9;
}

const std::atomic<bool>* StopSignals::flag() { return &g_flag; }

void StopSignals::reset() {
  g_flag.store(false);
  g_signal.store(0);
  g_signal_ns.store(0);
}

}  // namespace sx
