#pragma once
// Several GPUs in one process (docs/devices.md, "Several GPUs"): the ranks of
// SEXPGPU_DEVICES train data-parallel. Rank 0 is the session's own RunDevice,
// driven from the session's thread, which alone reports, evaluates and
// checkpoints. Ranks 1 ... N-1 each have a thread of their own that makes its
// device, makes every call to it and ends it: a CUDA context is current on a
// thread, and the emulated devices compute on the CPU, so the ranks' steps
// run side by side rather than one after another.
//
// A step: the session's thread reads the step's :batch records in order and
// gives rank r the r-th contiguous share, which it runs as its :microbatches,
// numbered and scaled as the step's microbatches r x m ... r x m + m - 1 of
// N x m; every rank then sums the step's gradient over the ranks in rank
// order, and every rank applies the same update. N GPUs of one microbatch
// each add exactly the terms one GPU of N microbatches adds, in the same
// order: the same bits. The terms cross between real GPUs with NCCL (one
// communicator per rank from ncclCommInitAll, nccl_communicator.h, its
// watchdog bounding every collective), between emulated ones through an
// in-process Communicator (inprocess_communicator.h).
//
// Nodes of several GPUs: each node's group is its share of the step, and its
// GPUs are ranks node x G ... node x G + G - 1 of every node's N x G GPUs
// (node_group_communicator.h), numbered and scaled as those microbatches of
// N x G x m; the gradient's sum crosses the nodes inside the group's
// exchange (over one NCCL communicator on real GPUs), so the nodes' own step
// exchange carries only their stop flags and sums (node_step.h). N nodes of G
// GPUs of one microbatch add the terms of one GPU of N x G, in its order.
//
// Every wait for a rank is bounded by SEXPGPU_NODE_TIMEOUT: a rank that does
// not answer stops the run with E-NODE-011 naming it, never a hang.
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "runtime/communicator.h"
#include "runtime/nccl_communicator.h"
#include "runtime/run_device.h"

namespace sx {

class DeviceGroup {
 public:
  // Starts opening ranks 1 ... of `ordinals` (rank 0, ordinals[0], is the
  // caller's to open meanwhile), each as open_run_device does; opened() waits.
  // `nccl`: the GPUs are real and exchange through it; null: emulated.
  // `nodes`: the run's nodes (of one, or this node's rank among several,
  // whose gradient terms cross as `wire`); it outlives the group.
  DeviceGroup(std::string_view device, const Compiled& c, const std::string& base_dir, int threads,
              const std::vector<int>& ordinals, double timeout_s, const nccl::Api* nccl, Communicator& nodes,
              GradientPrecision wire = GradientPrecision::f32);
  ~DeviceGroup();
  DeviceGroup(const DeviceGroup&) = delete;
  DeviceGroup& operator=(const DeviceGroup&) = delete;

  // Then, over NCCL, the communicators are made (rank 0's GPU is `lead`'s).
  void opened(RunDevice& lead);
  // This node's GPUs.
  int size() const { return static_cast<int>(ordinals_.size()); }
  // Whether the gradient's sum crosses the nodes in the group's exchange.
  bool spans_nodes() const { return nodes_.size() > 1; }
  const std::vector<int>& ordinals() const { return ordinals_; }

  // Step k on every rank (rank 0 is `lead`), its records (this node's share)
  // read from `feed`; returns the loss, metric and tap sums over this node's
  // ranks, in rank order. After it every rank of every node holds the same
  // step gradient.
  StepSums run_step(RunDevice& lead, TrainFeed& feed, int64_t k);
  // The update of step k on every rank; rank 0's stats.
  StepStats update(RunDevice& lead, int64_t k, double lr, bool want_stats);
  // A resumed run's tensors on ranks 1 ... (rank 0's are the caller's).
  void upload(const ckpt::CheckpointData& in, const std::string& checkpoint);

 private:
  struct Rank;
  // Waits for rank r's task, at most the timeout (E-NODE-011), and rethrows its error.
  void wait(size_t r, const char* what);
  // After a failure on this thread: gives every rank a moment to end its task, rethrowing nothing.
  void settle();
  const Compiled& c_;
  std::vector<int> ordinals_;
  double timeout_s_;
  const nccl::Api* nccl_;
  Communicator& nodes_;
  GradientPrecision wire_;
  std::vector<std::unique_ptr<NcclDevice>> nccl_devices_;  // per rank, over NCCL
  std::vector<std::shared_ptr<Communicator>> comms_;       // per rank
  std::vector<std::shared_ptr<Rank>> ranks_;               // per rank; ranks_[0] is null (the caller's)
};

// Opens rank 0 into `lead` (the device of one rank or the only one) and, with
// --device cuda and several SEXPGPU_DEVICES, the other ranks; null on one
// device. `nodes`: the run's nodes, as for DeviceGroup.
std::unique_ptr<DeviceGroup> open_devices(std::string_view device, const Compiled& c, const std::string& base_dir,
                                          const Environment& env, RunDevice& lead, Communicator& nodes);

// Step k's microbatches and update, on every rank of `group`, or (null) on
// `lead` alone: this process, or its node's share of the step (`nodes`).
StepSums run_step(DeviceGroup* group, RunDevice& lead, const Compiled& c, TrainFeed& feed, int64_t k,
                  std::vector<int32_t>& tokens, std::vector<int32_t>& targets, const Communicator& nodes);
StepStats update_step(DeviceGroup* group, RunDevice& lead, int64_t k, double lr, bool want_stats);

// SEXPGPU_CUDA_EMULATE=N makes N emulated devices visible: the ordinals a run
// trains on, `asked` (SEXPGPU_DEVICES) or all of them; E-DEV-006 for one past N.
std::vector<int> emulated_ordinals(int visible, const std::vector<int>& asked);

}  // namespace sx
