#pragma once
// The real GPU behind gpu.h: device memory, pinned staging, one stream of
// asynchronous copies and launches, NVRTC's cubins loaded as modules,
// cuBLASLt products (the algorithm chosen once per descriptor) and CUDA
// graphs, all through the driver tables of driver.h.
#include <memory>

#include "backend/cuda/driver/discovery.h"
#include "backend/cuda/gpu.h"
#include "util/error.h"

namespace sx::cuda {

// cuBLASLt's workspace: what llm.c gives it on Hopper.
constexpr int64_t kCublasLtWorkspaceBytes = 32ll << 20;
// Uploads are copied into pinned memory of this size, round robin; the
// caller's memory is free as soon as upload returns.
constexpr int64_t kStagingBytes = 64ll << 20;

// The GPU of `device` through `driver` and `lt`. Throws E-DEV-007 when the
// driver refuses the context or the stream.
std::unique_ptr<Gpu> make_real_gpu(const DriverApi& driver, const CublasLtApi* lt, const CudaDeviceInfo& device);
// make_real_gpu for the first device require_cuda_devices chooses from
// this process's driver (SEXPGPU_DEVICES: its first ordinal).
std::unique_ptr<Gpu> make_real_gpu(const std::vector<int>& ordinals);

// A failed driver call as the UserError it is (E-DEV-007), naming the call;
// out of memory with the help that applies.
UserError driver_call_error(const DriverApi* api, const char* call, api::CUresult r);
UserError cublas_call_error(const CublasLtApi* api, const char* call, api::cublasStatus_t s);

}  // namespace sx::cuda
