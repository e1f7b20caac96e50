#pragma once
// One training step's exchange between nodes, between the last
// accumulate_gradients and the update: each node's stop flag, its sums of the
// loss, metrics and taps, and its share of the step's gradient go in one
// gather; every node then adds them in rank order. With each node's
// microbatches scaled by 1 / (nodes x microbatches) on its device, N nodes of
// one microbatch add exactly the terms one process of N microbatches adds, in
// the same order: the same bits.
#include <vector>

#include "backend/device.h"
#include "runtime/communicator.h"
#include "runtime/run_device.h"

namespace sx {

class StepExchange {
 public:
  StepExchange(Communicator& comm, GradientPrecision wire) : comm_(comm), wire_(wire) {}
  // Replaces `sums` and the device's step gradient by their sums over the
  // nodes; returns the first stopping signal in rank order (0: none), after
  // which the step must not be applied.
  int exchange(backend::Device& device, StepSums& sums, int stop_signal);

 private:
  Communicator& comm_;
  GradientPrecision wire_;
  std::vector<char> mine_, all_;
  std::vector<float> gradient_;
};

}  // namespace sx
