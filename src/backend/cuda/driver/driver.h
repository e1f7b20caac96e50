#pragma once
// The CUDA driver (libcuda.so.1) and cuBLASLt (libcublasLt.so.13) as tables
// of entry points filled by dlopen/dlsym on first use: the binary has no
// link-time dependency on either, so it starts on a machine without a GPU,
// and "no driver here" is a value that the refusal and `doctor` describe.
#include <memory>
#include <string>
#include <vector>

#include "backend/cuda/driver/cuda_types.h"

namespace sx::cuda {

// The driver API entry points sexpgpu calls, under the symbol each is bound
// to (cuda.h's #defines: cuMemAlloc is cuMemAlloc_v2, and so on).
struct DriverApi {
  api::CUresult (*init)(unsigned);
  api::CUresult (*driver_get_version)(int*);
  api::CUresult (*get_error_name)(api::CUresult, const char**);
  api::CUresult (*get_error_string)(api::CUresult, const char**);
  api::CUresult (*device_get_count)(int*);
  api::CUresult (*device_get)(api::CUdevice*, int);
  api::CUresult (*device_get_name)(char*, int, api::CUdevice);
  api::CUresult (*device_total_mem)(size_t*, api::CUdevice);
  api::CUresult (*device_get_attribute)(int*, int, api::CUdevice);
  api::CUresult (*primary_ctx_retain)(api::CUcontext*, api::CUdevice);
  api::CUresult (*primary_ctx_release)(api::CUdevice);
  api::CUresult (*ctx_set_current)(api::CUcontext);
  api::CUresult (*ctx_synchronize)();
  api::CUresult (*mem_get_info)(size_t*, size_t*);
  api::CUresult (*mem_alloc)(api::CUdeviceptr*, size_t);
  api::CUresult (*mem_free)(api::CUdeviceptr);
  api::CUresult (*mem_host_alloc)(void**, size_t, unsigned);
  api::CUresult (*mem_free_host)(void*);
  api::CUresult (*memcpy_htod_async)(api::CUdeviceptr, const void*, size_t, api::CUstream);
  api::CUresult (*memcpy_dtoh_async)(void*, api::CUdeviceptr, size_t, api::CUstream);
  api::CUresult (*memcpy_dtod_async)(api::CUdeviceptr, api::CUdeviceptr, size_t, api::CUstream);
  api::CUresult (*memset_d8_async)(api::CUdeviceptr, unsigned char, size_t, api::CUstream);
  api::CUresult (*module_load_data)(api::CUmodule*, const void*);
  api::CUresult (*module_unload)(api::CUmodule);
  api::CUresult (*module_get_function)(api::CUfunction*, api::CUmodule, const char*);
  api::CUresult (*launch_kernel)(api::CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                 api::CUstream, void**, void**);
  api::CUresult (*stream_create)(api::CUstream*, unsigned);
  api::CUresult (*stream_destroy)(api::CUstream);
  api::CUresult (*stream_synchronize)(api::CUstream);
  api::CUresult (*stream_query)(api::CUstream);
  api::CUresult (*event_create)(api::CUevent*, unsigned);
  api::CUresult (*event_destroy)(api::CUevent);
  api::CUresult (*event_record)(api::CUevent, api::CUstream);
  api::CUresult (*event_synchronize)(api::CUevent);
  api::CUresult (*event_elapsed_time)(float*, api::CUevent, api::CUevent);
  api::CUresult (*stream_begin_capture)(api::CUstream, int);
  api::CUresult (*stream_end_capture)(api::CUstream, api::CUgraph*);
  api::CUresult (*graph_instantiate)(api::CUgraphExec*, api::CUgraph, unsigned long long);
  api::CUresult (*graph_launch)(api::CUgraphExec, api::CUstream);
  api::CUresult (*graph_exec_destroy)(api::CUgraphExec);
  api::CUresult (*graph_destroy)(api::CUgraph);
};

// cuBLASLt's entry points.
struct CublasLtApi {
  size_t (*get_version)();
  const char* (*get_status_string)(api::cublasStatus_t);
  api::cublasStatus_t (*create)(api::cublasLtHandle_t*);
  api::cublasStatus_t (*destroy)(api::cublasLtHandle_t);
  api::cublasStatus_t (*matmul_desc_create)(api::cublasLtMatmulDesc_t*, int, int);
  api::cublasStatus_t (*matmul_desc_destroy)(api::cublasLtMatmulDesc_t);
  api::cublasStatus_t (*matmul_desc_set_attribute)(api::cublasLtMatmulDesc_t, int, const void*, size_t);
  api::cublasStatus_t (*matrix_layout_create)(api::cublasLtMatrixLayout_t*, int, uint64_t, uint64_t, int64_t);
  api::cublasStatus_t (*matrix_layout_destroy)(api::cublasLtMatrixLayout_t);
  api::cublasStatus_t (*matrix_layout_set_attribute)(api::cublasLtMatrixLayout_t, int, const void*, size_t);
  api::cublasStatus_t (*preference_create)(api::cublasLtMatmulPreference_t*);
  api::cublasStatus_t (*preference_destroy)(api::cublasLtMatmulPreference_t);
  api::cublasStatus_t (*preference_set_attribute)(api::cublasLtMatmulPreference_t, int, const void*, size_t);
  api::cublasStatus_t (*algo_get_heuristic)(api::cublasLtHandle_t, api::cublasLtMatmulDesc_t,
                                            api::cublasLtMatrixLayout_t, api::cublasLtMatrixLayout_t,
                                            api::cublasLtMatrixLayout_t, api::cublasLtMatrixLayout_t,
                                            api::cublasLtMatmulPreference_t, int, api::cublasLtMatmulHeuristicResult_t*,
                                            int*);
  api::cublasStatus_t (*matmul)(api::cublasLtHandle_t, api::cublasLtMatmulDesc_t, const void*, const void*,
                                api::cublasLtMatrixLayout_t, const void*, api::cublasLtMatrixLayout_t, const void*,
                                const void*, api::cublasLtMatrixLayout_t, void*, api::cublasLtMatrixLayout_t,
                                const api::cublasLtMatmulAlgo_t*, void*, size_t, api::CUstream);
};

// Where a library was looked for and what was found: `api` is null when
// nothing loaded, and `failure` then says, per place tried, why not. The
// library itself stays loaded for the process.
template <typename Api>
struct LoadedLibrary {
  std::shared_ptr<const Api> api;
  std::string path;
  std::string failure;
};
using DriverLibrary = LoadedLibrary<DriverApi>;
using CublasLtLibrary = LoadedLibrary<CublasLtApi>;

// The driver is the system's: the bare soname only (the loader's cache,
// LD_LIBRARY_PATH), then the places NVIDIA's container runtime mounts it.
// Never the toolkit's stubs/libcuda.so, which loads and then fails every call.
std::vector<std::string> default_driver_candidates();
// cuBLASLt: the bare soname, /usr/local/cuda/lib64, /usr/local/cuda-*/lib64
// (newest first), then a Python venv's NVIDIA wheels ($VIRTUAL_ENV,
// /opt/torch/.venv: site-packages/nvidia/cublas/lib, nvidia/cu13/lib).
std::vector<std::string> default_cublaslt_candidates();

// The first candidate that loads and has every entry point. The
// process-wide ones (default candidates) are loaded once and kept loaded.
DriverLibrary load_driver(const std::vector<std::string>& candidates);
CublasLtLibrary load_cublaslt(const std::vector<std::string>& candidates);
const DriverLibrary& driver();
const CublasLtLibrary& cublaslt();

// "CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected": the
// driver's own name and text where it gives them, else a table of our own.
std::string driver_error_text(const DriverApi* api, api::CUresult r);
std::string cublas_status_text(const CublasLtApi* api, api::cublasStatus_t s);

// "13.0" from cuDriverGetVersion's 13000.
std::string cuda_version_text(int version);

}  // namespace sx::cuda
