#pragma once
// SIGTERM, SIGINT and SIGHUP ask the run to stop at the next step boundary; a
// second signal while stopping exits at once with the same status.
#include <atomic>
#include <chrono>
#include <csignal>

namespace sx {

class StopSignals {
 public:
  // Installs the handlers (once per process).
  static void install();
  // The signal that asked to stop, or 0.
  static int pending();
  static const char* name(int sig);  // "SIGTERM"
  // Seconds since the first signal arrived.
  static double since_signal();
  // Set once a stopping signal arrived: for waits (data loading) that poll a flag.
  static const std::atomic<bool>* flag();
  // For tests: forget a pending signal.
  static void reset();
};

}  // namespace sx
