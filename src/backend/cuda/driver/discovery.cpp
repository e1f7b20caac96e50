#include "backend/cuda/driver/discovery.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/cuda/rt/nvrtc.h"
#include "util/error.h"
#include "util/memory.h"

namespace sx::cuda {

namespace {

constexpr const char* kCpuHelp = "or run with --device cpu";

bool ok(api::CUresult r) { return r == api::CUDA_SUCCESS; }

CudaDeviceInfo describe_device(const DriverApi& a, int ordinal, bool with_free_memory) {
  CudaDeviceInfo info;
  info.ordinal = ordinal;
  api::CUdevice dev = 0;
  if (!ok(a.device_get(&dev, ordinal))) return info;
  char name[256] = {};
  if (ok(a.device_get_name(name, sizeof name - 1, dev))) info.name = name;
  int major = 0, minor = 0;
  a.device_get_attribute(&major, api::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  a.device_get_attribute(&minor, api::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  info.compute_capability = major * 10 + minor;
  a.device_get_attribute(&info.multiprocessors, api::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  size_t total = 0;
  if (ok(a.device_total_mem(&total, dev))) info.total_bytes = total;
  api::CUcontext ctx = nullptr;
  if (with_free_memory && ok(a.primary_ctx_retain(&ctx, dev))) {
    size_t free = 0;
    if (ok(a.ctx_set_current(ctx)) && ok(a.mem_get_info(&free, &total))) info.free_bytes = free;
    a.ctx_set_current(nullptr);
    a.primary_ctx_release(dev);
  }
  return info;
}

std::string driver_named(const Discovery& d) {
  return d.driver_version ? fmt::format("{}, CUDA {}", d.driver_path, cuda_version_text(d.driver_version))
                          : d.driver_path;
}

}  // namespace

std::string CudaDeviceInfo::arch() const { return fmt::format("sm_{}", compute_capability); }

Discovery discover(const DriverLibrary& lib, bool with_free_memory) {
  Discovery d;
  if (lib.api == nullptr) {
    d.failure = lib.failure;
    return d;
  }
  const DriverApi& a = *lib.api;
  d.driver_path = lib.path;
  if (!ok(a.driver_get_version(&d.driver_version))) d.driver_version = 0;
  if (api::CUresult r = a.init(0); !ok(r)) {
    d.outcome = Discovery::Outcome::init_failed;
    d.failure = "cuInit: " + driver_error_text(&a, r);
    return d;
  }
  int count = 0;
  if (api::CUresult r = a.device_get_count(&count); !ok(r) || count <= 0) {
    d.outcome = Discovery::Outcome::no_device;
    d.failure = ok(r) ? "it counts 0 devices" : "cuDeviceGetCount: " + driver_error_text(&a, r);
    return d;
  }
  d.outcome = Discovery::Outcome::ok;
  for (int i = 0; i < count; ++i) d.devices.push_back(describe_device(a, i, with_free_memory));
  return d;
}

const Discovery& discovered() {
  static const Discovery d = discover(driver(), false);
  return d;
}

std::vector<CudaDeviceInfo> require_cuda_devices(const Discovery& d, const std::vector<int>& ordinals) {
  switch (d.outcome) {
    case Discovery::Outcome::no_driver:
      throw UserError(
          Code::DEV_002, {},
          fmt::format("--device cuda needs the NVIDIA driver, and libcuda.so.1 did not load: {}", d.failure),
          fmt::format("install the NVIDIA driver (580 or newer), or give the container the GPU; {}", kCpuHelp));
    case Discovery::Outcome::init_failed:
    case Discovery::Outcome::no_device:
      throw UserError(Code::DEV_003, {},
                      fmt::format("the NVIDIA driver ({}) gives no CUDA device: {}", driver_named(d), d.failure),
                      fmt::format("check nvidia-smi and CUDA_VISIBLE_DEVICES; {}", kCpuHelp));
    case Discovery::Outcome::ok:
      break;
  }
  if (d.driver_version < kMinDriverVersion)
    throw UserError(
        Code::DEV_004, {},
        fmt::format("the NVIDIA driver ({}) supports CUDA {}; this build's kernels need CUDA {} or newer",
                    driver_named(d), cuda_version_text(d.driver_version), cuda_version_text(kMinDriverVersion)),
        fmt::format("update the driver to 580 or newer; {}", kCpuHelp));
  std::vector<CudaDeviceInfo> chosen;
  if (ordinals.empty()) chosen = d.devices;
  for (int o : ordinals) {
    if (o < 0 || o >= static_cast<int>(d.devices.size()))
      throw UserError(Code::DEV_006, {},
                      fmt::format("SEXPGPU_DEVICES names CUDA device {}, but the driver has {} (ordinals 0 to {})", o,
                                  d.devices.size(), d.devices.size() - 1),
                      "sexpgpu doctor lists the devices");
    chosen.push_back(d.devices[o]);
  }
  for (const auto& dev : chosen)
    if (dev.compute_capability < kMinComputeCapability)
      throw UserError(Code::DEV_004, {},
                      fmt::format("CUDA device {} ({}) is {}; this build's kernels need sm_{} or newer", dev.ordinal,
                                  dev.name, dev.arch(), kMinComputeCapability),
                      fmt::format("choose another device with SEXPGPU_DEVICES; {}", kCpuHelp));
  if (cublaslt().api == nullptr)
    throw UserError(Code::DEV_005, {}, fmt::format("cannot load cuBLASLt (libcublasLt.so.13): {}", cublaslt().failure),
                    "install the CUDA toolkit 13 (/usr/local/cuda) or NVIDIA's cublas wheel, or put the folder "
                    "holding libcublasLt.so.13 on LD_LIBRARY_PATH");
  require_nvrtc();
  return chosen;
}

DoctorLine describe_devices(const Discovery& d) {
  DoctorLine line;
  switch (d.outcome) {
    case Discovery::Outcome::no_driver:
      line.text = "no NVIDIA driver (libcuda.so.1 not found): --device cuda is refused (E-DEV-002)";
      line.todo = "install the NVIDIA driver to train on a GPU";
      return line;
    case Discovery::Outcome::init_failed:
    case Discovery::Outcome::no_device:
      line.text = fmt::format("the NVIDIA driver ({}) gives no device: {}; --device cuda is refused (E-DEV-003)",
                              driver_named(d), d.failure);
      line.todo = "check nvidia-smi and CUDA_VISIBLE_DEVICES";
      return line;
    case Discovery::Outcome::ok:
      break;
  }
  std::vector<std::string> each;
  bool usable = d.driver_version >= kMinDriverVersion;
  for (const auto& dev : d.devices) {
    usable = usable && dev.compute_capability >= kMinComputeCapability;
    each.push_back(fmt::format("{} {} ({}, {} SMs, {} free of {})", dev.ordinal, dev.name, dev.arch(),
                               dev.multiprocessors, bytes_text(dev.free_bytes), bytes_text(dev.total_bytes)));
  }
  line.ok = usable;
  line.text = fmt::format("{} CUDA device{}: {}; driver {}", d.devices.size(), d.devices.size() == 1 ? "" : "s",
                          fmt::join(each, "; "), driver_named(d));
  if (!usable) line.todo = "a device or the driver is too old for this build (E-DEV-004)";
  return line;
}

bool built_with_cuda() {
#ifdef SEXPGPU_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

std::string toolkit_version() {
#ifdef SEXPGPU_CUDA_TOOLKIT_VERSION
  return SEXPGPU_CUDA_TOOLKIT_VERSION;
#else
  return {};
#endif
}

std::string cublaslt_version_text(const CublasLtApi& api) {
  size_t v = api.get_version();
  return fmt::format("{}.{}.{}", v / 10000, v / 100 % 100, v % 100);
}

}  // namespace sx::cuda
