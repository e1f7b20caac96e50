#pragma once
// What CUDA this machine has: the driver, its devices, and whether this build
// can use them. `run --device cuda` is refused before the first step with a
// code that says what is missing; `sexpgpu doctor` prints the same facts.
#include <cstdint>
#include <string>
#include <vector>

#include "backend/cuda/driver/driver.h"

namespace sx::cuda {

// The oldest hardware and driver the generated kernels and NVRTC 13's cubins run on.
constexpr int kMinComputeCapability = 80;  // sm_80: bf16 arithmetic
constexpr int kMinDriverVersion = 13000;   // CUDA 13.0 (driver 580)

struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;            // "NVIDIA H200"
  int compute_capability = 0;  // 90 for sm_90
  int multiprocessors = 0;
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;   // 0 unless discovered with_free_memory
  std::string arch() const;  // "sm_90"
};

struct Discovery {
  enum class Outcome { no_driver, init_failed, no_device, ok };
  Outcome outcome = Outcome::no_driver;
  std::string driver_path;  // the libcuda that loaded
  int driver_version = 0;   // cuDriverGetVersion: 13000 for CUDA 13.0
  std::string failure;      // no_driver: the places tried; init_failed: the driver's error
  std::vector<CudaDeviceInfo> devices;
};

// Asks the driver (null: none loaded) for its devices. Free memory needs a
// context on each device (the primary one, retained and released again).
Discovery discover(const DriverLibrary& lib, bool with_free_memory);
// discover(driver()) for this process, once (without free memory).
const Discovery& discovered();

// The devices `run --device cuda` will train on: those of `ordinals` (empty:
// all), each checked. Throws E-DEV-002 (no driver), E-DEV-003 (no device),
// E-DEV-004 (too old), E-DEV-006 (no such ordinal), E-DEV-005 (no cuBLASLt),
// E-DEV-030 (no NVRTC).
std::vector<CudaDeviceInfo> require_cuda_devices(const Discovery& d, const std::vector<int>& ordinals);

// `doctor`'s devices line: count, names, driver version, free memory, or why none.
struct DoctorLine {
  bool ok = false;
  std::string text;
  std::string todo;
};
DoctorLine describe_devices(const Discovery& d);

// Whether this build was configured with the CUDA toolkit (SEXPGPU_HAVE_CUDA),
// and which ("13.0.88"; empty without).
bool built_with_cuda();
std::string toolkit_version();
// "13.1.0" from cublasLtGetVersion's 130100.
std::string cublaslt_version_text(const CublasLtApi& api);

}  // namespace sx::cuda
