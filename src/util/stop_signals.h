#pragma once
// SIGTERM, SIGINT and SIGHUP ask the run to stop at the next step boundary; a
// second signal while stopping exits at once with the same status, leaving the
// status file in state `stopped`. SIGPIPE is ignored: a closed standard error
// or output is an error of the write (EPIPE), never the end of the process.
#include <atomic>
#include <chrono>
#include <csignal>
#include <string>

namespace sx {

class StopSignals {
 public:
  // Installs the handlers (once per process). The sexpgpu binary calls it
  // before main, so that a signal at any moment is answered.
  static void install();
  // The signal that asked to stop, or 0.
  static int pending();
  static const char* name(int sig);  // "SIGTERM"
  // Seconds since the first signal arrived.
  static double since_signal();
  // Set once a stopping signal arrived: for waits (data loading) that poll a flag.
  static const std::atomic<bool>* flag();
  // What the second signal writes to the status file before it exits: `text`
  // into `temp`, renamed over `target`.
  static void set_last_status(const std::string& temp, const std::string& target, const std::string& text);
  // For tests: forget a pending signal.
  static void reset();
};

}  // namespace sx
