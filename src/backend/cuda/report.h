#pragma once
// What `explain --device cuda` (and `run` on a GPU) says about a lowered
// graph: the lowering report line, every launch with SEXPGPU_EXPLAIN=kernels,
// and the memory plan sized per dtype, checked against the device (E-MEM-001).
#include <optional>
#include <string>
#include <vector>

#include "backend/cuda/lower.h"
#include "backend/cuda/rt/nvrtc.h"
#include "graph/params.h"

namespace sx {
struct RunDecl;
struct OptimizerSpec;
}  // namespace sx

namespace sx::cuda {

constexpr int64_t kGemmWorkspace = 32ll << 20;  // cuBLASLt's workspace on Hopper, as llm.c gives it

struct TensorSize {
  std::string path;
  int64_t elements = 0;
};

struct DevicePlan {
  int64_t arena = 0;         // the step's buffers packed, bf16 ones at 2 bytes
  int64_t params = 0;        // f32 master weights
  int64_t param_copies = 0;  // bf16 copies the products read (bf16 only)
  int64_t grads = 0;         // f32 gradient accumulators
  int64_t optimizer = 0;     // optimizer state (adamw: m and v)
  int64_t workspace = kGemmWorkspace;
  int64_t total() const { return arena + params + param_copies + grads + optimizer + workspace; }
};

// The plan's arena again with each buffer at its device size: 2 bytes an
// element where the launch stores it in bf16, else 4.
int64_t device_arena_bytes(const Graph& g, const plan::Plan& p, const Lowering& l);

// `state_per_element`: optimizer state floats per parameter element (adamw 2, sgd with momentum 1).
DevicePlan device_plan(const Graph& g, const plan::Plan& p, const Lowering& l, Precision precision,
                       const std::vector<TensorSize>& params, int state_per_element, bool training);

// What the lowering of a training step (`training`) or a pass tells the
// optimizer's launches; `spec` null: none.
OptimizerInfo optimizer_info(const std::vector<ParamInfo>& params, const OptimizerSpec* spec, bool training);
// device_plan for a graph of `run` (its precision and optimizer): what
// `explain` and `run` both report.
DevicePlan run_device_plan(const Graph& g, const plan::Plan& p, const Lowering& l, const RunDecl& run,
                           const std::vector<ParamInfo>& params, bool training);
std::vector<TensorSize> tensor_sizes(const std::vector<ParamInfo>& params);

// What compiling a graph's generated kernels gave, as its report says it.
struct CompiledLaunches {
  int cached = 0, compiled = 0;            // generated launches whose kernel the cache gave / NVRTC compiled
  std::vector<KernelResources> resources;  // ptxas's report, per launch of the lowering (empty name: none)
};

// "lowering train-step: 412 nodes -> 61 launches (18 cublas, 43 generated: 40 cached, 3 compiled) plan 1.84 GiB";
// `compiled` null: "43 generated: not compiled".
std::string report_line(const std::string& graph, const Lowering& l, int64_t plan_bytes,
                        const CompiledLaunches* compiled = nullptr);
// One line per launch: index, kernel, grid, shape, dtype, model paths and .sx
// positions, and when compiled the registers (and any spills or stack) ptxas reports.
std::string kernel_lines(const Graph& g, const Lowering& l, const CompiledLaunches* compiled = nullptr);

// Throws E-MEM-001 when `plan` exceeds `available` bytes (`source` names where the figure came from).
void check_fits(const Graph& g, const plan::Plan& p, const DevicePlan& plan, int64_t available,
                const std::string& source, const std::vector<TensorSize>& params);

std::string gib_text(int64_t bytes);  // "1.84 GiB"

}  // namespace sx::cuda
