#pragma once
// One training step's exchange between nodes, between the last
// accumulate_gradients and the update: each node's stop flag, its sums of the
// loss, metrics and taps, and its share of the step's gradient go in one
// gather; every node then adds them in rank order. With each node's
// microbatches scaled by 1 / (nodes x microbatches) on its device, N nodes of
// one microbatch add exactly the terms one process of N microbatches adds, in
// the same order: the same bits. Nodes of several GPUs have summed the
// gradient over every GPU of every node already (device_group.h): their
// exchange carries the flags and sums alone.
#include <optional>
#include <vector>

#include "backend/device.h"
#include "runtime/communicator.h"
#include "runtime/nccl_gpu.h"
#include "runtime/run_device.h"

namespace sx {

class StepExchange {
 public:
  // `gradient`: whether the step's gradient crosses here.
  StepExchange(Communicator& comm, GradientPrecision wire, bool gradient = true)
      : comm_(comm), wire_(wire), gradient_crosses_(gradient) {}
  // Replaces `sums` and (when it crosses here) the device's step gradient by
  // their sums over the nodes; returns the first stopping signal in rank order (0: none), after
  // which the step must not be applied.
  int exchange(backend::Device& device, StepSums& sums, int stop_signal);

 private:
  Communicator& comm_;
  GradientPrecision wire_;
  bool gradient_crosses_;
  std::vector<char> mine_, all_;
  std::vector<float> gradient_;
};

// Several nodes' exchange, chosen once the devices are open: over `nodes`
// (Gloo); over NCCL across the nodes for nodes of one real GPU (`lead`'s);
// of the flags and sums alone when the device group sums the gradient over
// every node already (`group_spans_nodes`).
struct NodeExchange {
  NcclNodes nccl;  // nodes of one real GPU: their communicator (it ends before the device)
  std::optional<StepExchange> step;
};
void open_node_exchange(NodeExchange& out, Communicator& nodes, bool group_spans_nodes, backend::Device& lead,
                        const Environment& env);

}  // namespace sx
