#pragma once
// A compiled experiment on a device: the device made by name, its buffers
// initialised, the training graph and each pass's graph loaded; then what a
// step and a pass do on it, and the tensors a checkpoint moves. The session
// drives this; no arithmetic on tensors happens on the host.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/device.h"
#include "checkpoint/checkpoint.h"
#include "driver/compile.h"
#include "runtime/feed.h"
#include "runtime/timing.h"

namespace sx {

struct RunDevice {
  std::unique_ptr<backend::Device> device;
  backend::GraphHandle train = 0;
  std::vector<backend::GraphHandle> passes;  // per Compiled::passes
};

// Makes device `name` and gives it the run's parameters: drawn from the
// run's seed, then replaced by :init-from when there is one. `ordinal`: the
// CUDA device of one rank of several GPUs (-1: SEXPGPU_DEVICES' first).
RunDevice open_run_device(std::string_view name, const Compiled& c, const std::string& base_dir, int threads,
                          int ordinal = -1);

// What the microbatches of one step report, summed over them.
struct StepSums {
  double loss = 0;
  std::vector<double> metrics;  // per c.train.traced.metrics
  std::vector<double> taps;     // per c.train.taps
};

// The forward and backward of step k's microbatches, the gradient summed on
// the device. Dropout's offset is k << 16 | microbatch. On several nodes,
// node `rank` of `nodes` takes the rank-th contiguous share of the step's
// records, its microbatches numbered (and scaled) as the step's microbatches
// rank x m ... rank x m + m - 1 of nodes x m (node_step.h sums the shares).
StepSums run_microbatches(RunDevice& d, const Compiled& c, TrainFeed& feed, int64_t k, std::vector<int32_t>& tokens,
                          std::vector<int32_t>& targets, int rank = 0, int nodes = 1);
// One of them: the step's microbatch `index` of `all`, this device's `j`-th,
// its scalars kept on the device (keep_scalars) and its gradient accumulated.
void run_microbatch(RunDevice& d, const Compiled& c, int64_t k, int64_t index, int64_t j, int64_t all,
                    const std::vector<int32_t>& tokens, const std::vector<int32_t>& targets);
// After a device's microbatches: their kept scalars added to `s`, microbatch
// after microbatch (the order, and so the bits, of adding each as it came).
void add_kept_scalars(RunDevice& d, const Compiled& c, StepSums& s);

// What a step must stop at, as NUM-001 names it: "train/loss" first, then
// "grad/<path>" of the first parameter in model-path order.
std::optional<std::string> first_nonfinite(const backend::Device& d, float loss);

// One batch of a pass, its loss and metrics kept on the device; then, after
// the pass's batches, theirs added to `loss` and `sums` batch after batch.
void run_pass_batch(RunDevice& d, const Compiled& c, size_t pass, const std::vector<int32_t>& tokens,
                    const std::vector<int32_t>& targets);
void add_kept_pass_scalars(RunDevice& d, double& loss, std::vector<double>& sums);

// On the cuda device: the lowering report of each loaded graph on standard
// error now, and the `timing kernels` and `memory: peak` lines for `timings`
// (docs/devices.md). Nothing on other devices.
void report_gpu(const RunDevice& d, const Compiled& c, bool explain_kernels, Timings& timings);

// The parameters and the optimizer's state, copied from the device for a checkpoint.
void download_for_checkpoint(const backend::Device& d, const std::vector<ParamInfo>& params, ckpt::CheckpointData& out);
// And back from a checkpoint; a missing tensor or one of another size is
// E-CKPT-024 naming `checkpoint` (nothing is uploaded before all are checked).
void upload_from_checkpoint(backend::Device& d, const std::vector<ParamInfo>& params, const ckpt::CheckpointData& in,
                            const std::string& checkpoint);

}  // namespace sx
