#include "backend/cuda/driver/driver.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "util/toolkit_libraries.h"

namespace sx::cuda {

namespace {

// Binds every entry point, collecting the names a library lacks.
class Binder {
 public:
  explicit Binder(void* lib) : lib_(lib) {}
  template <typename F>
  void operator()(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib_, name));
    if (f == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
  }
  std::string missing;

 private:
  void* lib_;
};

void bind_driver(Binder& b, DriverApi& a) {
  b(a.init, "cuInit");
  b(a.driver_get_version, "cuDriverGetVersion");
  b(a.get_error_name, "cuGetErrorName");
  b(a.get_error_string, "cuGetErrorString");
  b(a.device_get_count, "cuDeviceGetCount");
  b(a.device_get, "cuDeviceGet");
  b(a.device_get_name, "cuDeviceGetName");
  b(a.device_total_mem, "cuDeviceTotalMem_v2");
  b(a.device_get_attribute, "cuDeviceGetAttribute");
  b(a.primary_ctx_retain, "cuDevicePrimaryCtxRetain");
  b(a.primary_ctx_release, "cuDevicePrimaryCtxRelease_v2");
  b(a.ctx_set_current, "cuCtxSetCurrent");
  b(a.ctx_synchronize, "cuCtxSynchronize");
  b(a.mem_get_info, "cuMemGetInfo_v2");
  b(a.mem_alloc, "cuMemAlloc_v2");
  b(a.mem_free, "cuMemFree_v2");
  b(a.mem_host_alloc, "cuMemHostAlloc");
  b(a.mem_free_host, "cuMemFreeHost");
  b(a.memcpy_htod_async, "cuMemcpyHtoDAsync_v2");
  b(a.memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2");
  b(a.memcpy_dtod_async, "cuMemcpyDtoDAsync_v2");
  b(a.memset_d8_async, "cuMemsetD8Async");
  b(a.module_load_data, "cuModuleLoadData");
  b(a.module_unload, "cuModuleUnload");
  b(a.module_get_function, "cuModuleGetFunction");
  b(a.launch_kernel, "cuLaunchKernel");
  b(a.stream_create, "cuStreamCreate");
  b(a.stream_destroy, "cuStreamDestroy_v2");
  b(a.stream_synchronize, "cuStreamSynchronize");
  b(a.stream_query, "cuStreamQuery");
  b(a.event_create, "cuEventCreate");
  b(a.event_destroy, "cuEventDestroy_v2");
  b(a.event_record, "cuEventRecord");
  b(a.event_synchronize, "cuEventSynchronize");
  b(a.event_elapsed_time, "cuEventElapsedTime_v2");
  b(a.stream_begin_capture, "cuStreamBeginCapture_v2");
  b(a.stream_end_capture, "cuStreamEndCapture");
  b(a.graph_instantiate, "cuGraphInstantiateWithFlags");
  b(a.graph_launch, "cuGraphLaunch");
  b(a.graph_exec_destroy, "cuGraphExecDestroy");
  b(a.graph_destroy, "cuGraphDestroy");
}

void bind_cublaslt(Binder& b, CublasLtApi& a) {
  b(a.get_version, "cublasLtGetVersion");
  b(a.get_status_string, "cublasLtGetStatusString");
  b(a.create, "cublasLtCreate");
  b(a.destroy, "cublasLtDestroy");
  b(a.matmul_desc_create, "cublasLtMatmulDescCreate");
  b(a.matmul_desc_destroy, "cublasLtMatmulDescDestroy");
  b(a.matmul_desc_set_attribute, "cublasLtMatmulDescSetAttribute");
  b(a.matrix_layout_create, "cublasLtMatrixLayoutCreate");
  b(a.matrix_layout_destroy, "cublasLtMatrixLayoutDestroy");
  b(a.matrix_layout_set_attribute, "cublasLtMatrixLayoutSetAttribute");
  b(a.preference_create, "cublasLtMatmulPreferenceCreate");
  b(a.preference_destroy, "cublasLtMatmulPreferenceDestroy");
  b(a.preference_set_attribute, "cublasLtMatmulPreferenceSetAttribute");
  b(a.algo_get_heuristic, "cublasLtMatmulAlgoGetHeuristic");
  b(a.matmul, "cublasLtMatmul");
}

template <typename Api, typename BindFn>
LoadedLibrary<Api> load_first(const std::vector<std::string>& candidates, BindFn bind_all) {
  LoadedLibrary<Api> out;
  // The places where there is no such file, in one list; any other reason
  // (a wrong architecture, a missing dependency) in full.
  std::vector<std::string> absent, other;
  auto note = [&](const std::string& path, const std::string& why) { other.push_back(path + ": " + why); };
  for (const auto& path : candidates) {
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* why = dlerror();
      std::string text = why ? why : "not found";
      if (text.find("No such file or directory") != std::string::npos)
        absent.push_back(path);
      else
        note(path, text);
      continue;
    }
    auto api = std::make_unique<Api>();
    Binder binder(lib);
    bind_all(binder, *api);
    if (!binder.missing.empty()) {
      note(path, "it lacks " + binder.missing);
      dlclose(lib);
      continue;
    }
    // The library is never closed: device memory, modules and handles made
    // through it live until exit.
    out.api = std::move(api);
    out.path = path;
    return out;
  }
  if (!absent.empty()) other.insert(other.begin(), fmt::format("no such file: {}", fmt::join(absent, ", ")));
  out.failure = other.empty() ? "no place to look" : fmt::format("{}", fmt::join(other, "; "));
  return out;
}

// The driver's names for the errors seen without a working GPU, for a
// driver (the stub) that cannot name them itself.
const char* known_error_name(api::CUresult r) {
  switch (r) {
    case api::CUDA_ERROR_OUT_OF_MEMORY:
      return "CUDA_ERROR_OUT_OF_MEMORY";
    case api::CUDA_ERROR_NOT_INITIALIZED:
      return "CUDA_ERROR_NOT_INITIALIZED";
    case api::CUDA_ERROR_STUB_LIBRARY:
      return "CUDA_ERROR_STUB_LIBRARY";
    case api::CUDA_ERROR_NO_DEVICE:
      return "CUDA_ERROR_NO_DEVICE";
    case api::CUDA_ERROR_INVALID_DEVICE:
      return "CUDA_ERROR_INVALID_DEVICE";
    case api::CUDA_ERROR_NO_BINARY_FOR_GPU:
      return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    default:
      return nullptr;
  }
}

const char* known_error_text(api::CUresult r) {
  switch (r) {
    case api::CUDA_ERROR_STUB_LIBRARY:
      return "this libcuda is the toolkit's stub, not a driver";
    case api::CUDA_ERROR_NO_DEVICE:
      return "no CUDA-capable device is detected";
    default:
      return nullptr;
  }
}

}  // namespace

std::vector<std::string> default_driver_candidates() {
  return {"libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1",
          "/usr/local/nvidia/lib64/libcuda.so.1"};
}

std::vector<std::string> default_cublaslt_candidates() {
  return toolkit_library_candidates("libcublasLt.so.13", {"lib64/"}, {"nvidia/cublas/lib/", "nvidia/cu13/lib/"});
}

DriverLibrary load_driver(const std::vector<std::string>& candidates) {
  return load_first<DriverApi>(candidates, bind_driver);
}

CublasLtLibrary load_cublaslt(const std::vector<std::string>& candidates) {
  return load_first<CublasLtApi>(candidates, bind_cublaslt);
}

const DriverLibrary& driver() {
  static const DriverLibrary lib = load_driver(default_driver_candidates());
  return lib;
}

const CublasLtLibrary& cublaslt() {
  static const CublasLtLibrary lib = load_cublaslt(default_cublaslt_candidates());
  return lib;
}

std::string driver_error_text(const DriverApi* api, api::CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api && api->get_error_name(r, &name) != api::CUDA_SUCCESS) name = nullptr;
  if (api && api->get_error_string(r, &text) != api::CUDA_SUCCESS) text = nullptr;
  if (name == nullptr) name = known_error_name(r);
  if (text == nullptr) text = known_error_text(r);
  std::string out = name ? fmt::format("{} ({})", name, r) : fmt::format("CUDA error {}", r);
  if (text) out += fmt::format(": {}", text);
  return out;
}

std::string cublas_status_text(const CublasLtApi* api, api::cublasStatus_t s) {
  const char* text = api ? api->get_status_string(s) : nullptr;
  return text ? fmt::format("{} ({})", text, s) : fmt::format("cuBLAS status {}", s);
}

std::string cuda_version_text(int version) { return fmt::format("{}.{}", version / 1000, version % 1000 / 10); }

}  // namespace sx::cuda
