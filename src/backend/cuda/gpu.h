#pragma once
// The thin layer under the CUDA device: the few calls it makes of a GPU.
// Two implementations: EmulatedGpu (emulated_gpu.h: host memory, launches
// run by the kernel-IR interpreter, GEMMs by the CPU GEMM with cuBLASLt's
// semantics) and the real one over libcuda and cuBLASLt, both loaded with
// dlopen. Everything the device decides (layout, order, what to launch) is
// above this line; everything below is a call with plain data.
//
// One stream: calls run in the order they are made. upload and memset
// return at once (the bytes are staged: the caller may reuse its memory);
// download and synchronize wait for every earlier call. Errors from the
// driver are thrown as UserErrors with codes in E-DEV-04x.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/cuda/kir.h"

namespace sx::cuda {

// A device address (CUdeviceptr on a GPU, a host address when emulated).
using DevicePtr = uint64_t;

// A scalar kernel argument, typed as the kernel's ScalarParam says.
struct Scalar {
  kir::ScalarType type = kir::ScalarType::f32;
  uint64_t u = 0;  // u64
  double f = 0;    // f32 (rounded when passed) and f64
  static Scalar u64(uint64_t v) { return {kir::ScalarType::u64, v, 0}; }
  static Scalar f32(float v) { return {kir::ScalarType::f32, 0, v}; }
  static Scalar f64(double v) { return {kir::ScalarType::f64, 0, v}; }
};

// Kernels compiled together: CUDA source (compiled by the implementation)
// or a cubin (compiled ahead, e.g. from the kernel cache).
struct Program {
  std::string source;
  std::vector<uint8_t> cubin;
  std::vector<std::string> kernels;  // the names to look up, extern "C"
};
using ProgramHandle = int;
using KernelHandle = int;  // a kernel of a loaded program

// A kernel reads its scalars from device memory, one 8-byte word each (u64
// as it is, an f32's bits in the low half, an f64's bits), not as values
// passed at the launch: a captured graph then replays with the words in
// memory when it replays (the step's learning rate, the rng offset), not
// those of its capture. The caller uploads the words before the launch.
std::vector<uint64_t> scalar_words(const std::vector<Scalar>& scalars);
std::vector<Scalar> scalars_of(const uint64_t* words, const std::vector<kir::ScalarParam>& params);

// One launch of a generated kernel. The arguments are the kernel's buffers
// in order (one pointer each), then, when it has scalars, the address of
// their words.
struct KernelCall {
  const kir::Kernel* kernel = nullptr;  // what the emulator interprets; the real GPU prints nothing from it
  KernelHandle handle = -1;             // from kernel(); -1 when emulated without a program
  int64_t grid = 1, block = 1;          // 1-D; grid-stride loops cover the rest
  int64_t shared_bytes = 0;
  std::vector<DevicePtr> buffers;
  DevicePtr scalars = 0;  // the words of the kernel's scalars (scalar_words); 0 when it has none
};

// One cuBLASLt matmul; pointers for kir::Gemm's bound values (0: none).
struct GemmCall {
  kir::Gemm desc;
  DevicePtr a = 0, b = 0, d = 0, bias = 0, aux = 0, bias_grad = 0;
  DevicePtr workspace = 0;
  int64_t workspace_bytes = 0;
};

using GraphExecHandle = int;

class Gpu {
 public:
  virtual ~Gpu() = default;

  // ---- the device ----
  virtual std::string name() const = 0;  // "NVIDIA H200", "emulated"
  virtual int64_t total_memory() const = 0;
  virtual int64_t free_memory() const = 0;
  virtual std::string arch() const = 0;  // "sm_90"; what NVRTC compiles for
  // Whether launches run the kernel IR (KernelCall::kernel) rather than compiled code.
  virtual bool interprets() const { return false; }

  // ---- memory ----
  virtual DevicePtr alloc(int64_t bytes) = 0;  // 256-byte aligned; E-DEV-04x when it cannot
  virtual void free(DevicePtr p) = 0;
  virtual void upload(DevicePtr dst, const void* src, int64_t bytes) = 0;
  virtual void download(void* dst, DevicePtr src, int64_t bytes) = 0;
  virtual void memset(DevicePtr dst, uint8_t value, int64_t bytes) = 0;
  virtual void copy(DevicePtr dst, DevicePtr src, int64_t bytes) = 0;  // device to device

  // ---- kernels ----
  virtual ProgramHandle load_program(const Program& program) = 0;
  virtual KernelHandle kernel(ProgramHandle program, const std::string& name) = 0;
  virtual void launch(const KernelCall& call) = 0;
  virtual void gemm(const GemmCall& call) = 0;
  virtual void synchronize() = 0;

  // ---- graphs: a recorded sequence of calls replayed as one ----
  // Between begin_capture and end_capture, launches, gemms, memsets and
  // copies are recorded, not run; an upload or a download there is a bug
  // (a captured copy would replay the staging memory of its capture).
  virtual void begin_capture() = 0;
  virtual GraphExecHandle end_capture() = 0;
  virtual void replay(GraphExecHandle graph) = 0;

  // ---- a collective library on the same stream (NCCL, runtime/nccl_gpu.h) ----
  // The stream every call is queued on (the driver's CUstream); null when emulated.
  virtual void* stream_handle() { return nullptr; }
  // As download, but returns at once: `dst` holds the bytes once idle() has said so.
  virtual void download_async(void* dst, DevicePtr src, int64_t bytes) { download(dst, src, bytes); }
  // Whether every call made so far has finished (then download_async's bytes are in place); never waits.
  virtual bool idle() { return true; }
  // Makes this GPU's context the calling thread's again (a library that set another device).
  virtual void make_current() {}

  // ---- what the run's report says ----
  virtual int64_t peak_allocated() const = 0;  // the most bytes allocated at once
};

// The emulated GPU: `memory_bytes` of pretend device memory (what
// total_memory and free_memory answer).
std::unique_ptr<Gpu> make_emulated_gpu(int64_t memory_bytes);

}  // namespace sx::cuda
