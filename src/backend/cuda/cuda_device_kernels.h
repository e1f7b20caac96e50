#pragma once
// Generated kernels to code a GPU loads, as `explain` and the CUDA device do
// it: each kernel printed (codegen/), the distinct texts batched into a few
// programs, each program through the kernel cache (NVRTC when it is not
// there), the programs compiled side by side on the machine's cores. Also
// the optimizer's kernels as the device builds them, so that `explain`
// compiles (and caches) exactly what a run loads.
#include <string>
#include <vector>

#include "backend/cuda/cuda_graph.h"
#include "backend/cuda/gpu.h"
#include "backend/cuda/report.h"
#include "backend/cuda/rt/kernel_cache.h"
#include "graph/params.h"

namespace sx {
struct OptimizerSpec;
}

namespace sx::cuda {

// What `explain` compiles for without a GPU: the H100's and H200's architecture.
constexpr const char* kDefaultArch = "sm_90";
// NVRTC's options for every program: no contraction into fused multiply-adds,
// so that the update has the CPU's bits.
const std::vector<std::string>& kernel_compile_options();

// The process's kernel cache (KernelCache::default_dir(): XDG_CACHE_HOME or ~/.cache).
KernelCache& process_kernel_cache();

struct CompiledProgramSet {
  struct Entry {
    Program program;  // the cubin and its kernels' names
    bool cached = false;
    std::vector<KernelResources> resources;  // ptxas's report, per kernel
  };
  std::vector<Entry> programs;
  std::vector<int> program_of;  // per kernel given: its program
  // ptxas's report for kernel `i` of those given (null when ptxas named no such entry).
  const KernelResources* resources(size_t i, const std::string& name) const;
};

// `kernels` printed, batched (kernels of the same name and text once) into
// programs of about `kernels / threads` kernels (at most 64), each through
// `cache`; `name` names the programs in NVRTC's messages. Adds the kernels
// to `tally` (compile_seconds: the wall time, programs in parallel counted once).
CompiledProgramSet compile_kernels(const Nvrtc& nvrtc, KernelCache& cache, const std::string& arch,
                                   const std::vector<const kir::Kernel*>& kernels, const std::string& name,
                                   KernelCounters& tally);

// A graph's calls (build_calls) and, for a training step, the optimizer's
// kernels, compiled as one set: what explain and the device both compile,
// so that one's cache entries are the other's.
struct GraphCode {
  CompiledProgramSet set;
  std::vector<int> kernel_of_call;  // per call: its kernel's index in the set, -1 for a GEMM
  std::vector<int> optimizer;       // per optimizer kernel given: its index in the set
  CompiledLaunches launches;        // what the lowering report counts
};
GraphCode compile_graph(const Nvrtc& nvrtc, KernelCache& cache, const std::string& arch, const Lowering& lowering,
                        const std::vector<Call>& calls, const std::vector<kir::Kernel>& optimizer,
                        const std::string& name, KernelCounters& tally);

// The multi-tensor optimizer's kernels, the global norm's then the update's,
// over `params` in model-path order, as the CUDA device launches them.
std::vector<kir::Kernel> optimizer_kernels(const std::vector<ParamInfo>& params, const OptimizerSpec& spec,
                                           bool bf16_copies);

}  // namespace sx::cuda
