#pragma once
// A stopping signal seen during compilation: every pass polls the flag the
// signal handler sets, so that a signal ends a long compile promptly.
#include <atomic>
#include <exception>

namespace sx {

struct Interrupted : std::exception {
  const char* what() const noexcept override { return "compilation interrupted by a signal"; }
};

// Throws Interrupted when `stop` is set; a null flag never stops.
inline void poll_stop(const std::atomic<bool>* stop) {
  if (stop && stop->load(std::memory_order_relaxed)) throw Interrupted();
}

}  // namespace sx
