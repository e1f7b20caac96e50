// The ops tests' cuda device on a real GPU: with SEXPGPU_CUDA_EMULATE=0
// (scripts/gpu_check.sh's ops stage, test_util.h) the device is made over
// the real GPU layer, installed here as the command line installs it.
#include "backend/cuda/cuda_device.h"
#include "backend/cuda/driver/real_gpu.h"

namespace {
const bool kRealGpuInstalled = [] {
  sx::cuda::install_real_gpu([](const std::vector<int>& ordinals) { return sx::cuda::make_real_gpu(ordinals); });
  return true;
}();
}  // namespace
