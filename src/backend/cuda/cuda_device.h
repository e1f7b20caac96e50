#pragma once
// The CUDA device over gpu.h: parameters, gradients, f32 master weights, bf16
// copies and optimizer state resident in device memory; each loaded graph an
// arena laid out by launch order (every value from the launch that writes it
// to the last launch that reads it, outputs to the end of the run) and the
// list of calls its lowering makes; microbatch accumulation, the non-finite
// scan and the update as kernels on the device. What the run reports of it
// (the lowering, the kernels, memory) is asked for through CudaReport.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/cuda/gpu.h"
#include "backend/cuda/lower.h"
#include "backend/cuda/report.h"
#include "backend/cuda/rt/kernel_cache.h"
#include "backend/device.h"

namespace sx::cuda {

// What `run --device cuda` prints of a device (docs/devices.md).
class CudaReport {
 public:
  virtual ~CudaReport() = default;
  // Per loaded graph: its lowering and the bytes its memory plan counts.
  struct LoadedLowering {
    const Graph* graph = nullptr;
    Lowering lowering;
    int64_t plan_bytes = 0;
    std::optional<CompiledLaunches> compiled;  // none: its kernels are interpreted, not compiled
  };
  virtual const std::vector<LoadedLowering>& lowerings() const = 0;
  virtual const Gpu& gpu() const = 0;
  // The kernels compiled and taken from the cache so far; none when the device compiles nothing.
  virtual std::optional<KernelCounters> kernel_counters() const = 0;
  // The launch sequences captured as CUDA graphs, and the replays of them.
  struct GraphCounters {
    int64_t captured = 0, replays = 0;
  };
  virtual GraphCounters graph_counters() const = 0;
};

// The GPU the device runs on: the emulated one when SEXPGPU_CUDA_EMULATE=1
// (`emulate`), else the real one of `ordinals` (null when no real GPU layer is
// installed). The real layer (backend/cuda/driver) links this library, so it
// is installed by the command line at start, not called from here.
using RealGpuFactory = std::unique_ptr<Gpu> (*)(const std::vector<int>& ordinals);
void install_real_gpu(RealGpuFactory make);
std::unique_ptr<Gpu> make_gpu(bool emulate, int64_t memory_bytes, const std::vector<int>& ordinals = {});

// Whether a device on the emulated GPU compiles its kernels too (with NVRTC
// and the kernel cache, where NVRTC is found) while it interprets them: the
// command line turns it on, so that every emulated run checks that its
// kernels compile; the tests that make many devices leave it off.
void compile_on_emulated_gpu(bool on);

// Whether the device captures its repeated launch sequences as CUDA graphs
// and replays them (on by default; the tests compare both ways).
void capture_cuda_graphs(bool on);

// The GPU under a cuda device (null for any other device): what NCCL is given.
Gpu* gpu_of(backend::Device& device);

// The device over `gpu`. A real GPU needs NVRTC (E-DEV-030 without it).
std::unique_ptr<backend::Device> make_cuda_device_on(std::unique_ptr<Gpu> gpu, Precision precision);

}  // namespace sx::cuda
