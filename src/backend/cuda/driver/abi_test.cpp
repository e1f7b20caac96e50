// Our declarations (cuda_types.h, driver.h) against the toolkit's headers:
// built only where they are installed. Ours come first: cuda.h's macros
// (cuMemAlloc -> cuMemAlloc_v2) must not rename anything of ours.
#include "backend/cuda/driver/cuda_types.h"
#include "backend/cuda/driver/driver.h"
// clang-format off
#include <cuda.h>
#include <cublasLt.h>
// clang-format on
#include <gtest/gtest.h>

#include <cstddef>
#include <type_traits>

namespace a = sx::cuda::api;

// Handles and scalars: the same sizes.
static_assert(sizeof(a::CUresult) == sizeof(CUresult));
static_assert(sizeof(a::CUdevice) == sizeof(CUdevice));
static_assert(sizeof(a::CUdeviceptr) == sizeof(CUdeviceptr));
static_assert(std::is_unsigned_v<a::CUdeviceptr> == std::is_unsigned_v<CUdeviceptr>);
static_assert(sizeof(a::CUstream) == sizeof(CUstream));
static_assert(sizeof(a::cublasStatus_t) == sizeof(cublasStatus_t));
static_assert(sizeof(a::cublasLtMatmulAlgo_t) == sizeof(cublasLtMatmulAlgo_t));
static_assert(sizeof(a::cublasLtMatmulHeuristicResult_t) == sizeof(cublasLtMatmulHeuristicResult_t));
static_assert(offsetof(a::cublasLtMatmulHeuristicResult_t, workspaceSize) ==
              offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize));
static_assert(offsetof(a::cublasLtMatmulHeuristicResult_t, state) == offsetof(cublasLtMatmulHeuristicResult_t, state));
static_assert(offsetof(a::cublasLtMatmulHeuristicResult_t, wavesCount) ==
              offsetof(cublasLtMatmulHeuristicResult_t, wavesCount));

// Values.
static_assert(a::CUDA_SUCCESS == CUDA_SUCCESS);
static_assert(a::CUDA_ERROR_OUT_OF_MEMORY == CUDA_ERROR_OUT_OF_MEMORY);
static_assert(a::CUDA_ERROR_NOT_INITIALIZED == CUDA_ERROR_NOT_INITIALIZED);
static_assert(a::CUDA_ERROR_STUB_LIBRARY == CUDA_ERROR_STUB_LIBRARY);
static_assert(a::CUDA_ERROR_NO_DEVICE == CUDA_ERROR_NO_DEVICE);
static_assert(a::CUDA_ERROR_INVALID_DEVICE == CUDA_ERROR_INVALID_DEVICE);
static_assert(a::CUDA_ERROR_NO_BINARY_FOR_GPU == CUDA_ERROR_NO_BINARY_FOR_GPU);
static_assert(a::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
static_assert(a::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(a::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(a::CU_STREAM_NON_BLOCKING == CU_STREAM_NON_BLOCKING);
static_assert(a::CU_EVENT_DEFAULT == CU_EVENT_DEFAULT);
static_assert(a::CU_EVENT_DISABLE_TIMING == CU_EVENT_DISABLE_TIMING);
static_assert(a::kMemHostAllocPortable == CU_MEMHOSTALLOC_PORTABLE);
static_assert(a::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
static_assert(a::CUBLAS_STATUS_SUCCESS == CUBLAS_STATUS_SUCCESS);
static_assert(a::CUBLAS_STATUS_NOT_INITIALIZED == CUBLAS_STATUS_NOT_INITIALIZED);
static_assert(a::CUBLAS_STATUS_NOT_SUPPORTED == CUBLAS_STATUS_NOT_SUPPORTED);
static_assert(a::CUDA_R_32F == CUDA_R_32F);
static_assert(a::CUDA_R_16BF == CUDA_R_16BF);
static_assert(a::CUBLAS_COMPUTE_32F == CUBLAS_COMPUTE_32F);
static_assert(a::CUBLAS_COMPUTE_32F_FAST_TF32 == CUBLAS_COMPUTE_32F_FAST_TF32);
static_assert(a::CUBLAS_OP_N == CUBLAS_OP_N);
static_assert(a::CUBLAS_OP_T == CUBLAS_OP_T);
static_assert(a::CUBLASLT_ORDER_COL == CUBLASLT_ORDER_COL);
static_assert(a::CUBLASLT_ORDER_ROW == CUBLASLT_ORDER_ROW);
static_assert(a::CUBLASLT_MATRIX_LAYOUT_ORDER == CUBLASLT_MATRIX_LAYOUT_ORDER);
static_assert(a::CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT);
static_assert(a::CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
static_assert(a::CUBLASLT_MATMUL_DESC_TRANSA == CUBLASLT_MATMUL_DESC_TRANSA);
static_assert(a::CUBLASLT_MATMUL_DESC_TRANSB == CUBLASLT_MATMUL_DESC_TRANSB);
static_assert(a::CUBLASLT_MATMUL_DESC_EPILOGUE == CUBLASLT_MATMUL_DESC_EPILOGUE);
static_assert(a::CUBLASLT_MATMUL_DESC_BIAS_POINTER == CUBLASLT_MATMUL_DESC_BIAS_POINTER);
static_assert(a::CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE == CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE);
static_assert(a::CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER == CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER);
static_assert(a::CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD == CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD);
static_assert(a::CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE == CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE);
static_assert(a::CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE == CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE);
static_assert(a::CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE == CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE);
static_assert(a::CUBLASLT_EPILOGUE_DEFAULT == CUBLASLT_EPILOGUE_DEFAULT);
static_assert(a::CUBLASLT_EPILOGUE_BIAS == CUBLASLT_EPILOGUE_BIAS);
static_assert(a::CUBLASLT_EPILOGUE_GELU == CUBLASLT_EPILOGUE_GELU);
static_assert(a::CUBLASLT_EPILOGUE_GELU_AUX == CUBLASLT_EPILOGUE_GELU_AUX);
static_assert(a::CUBLASLT_EPILOGUE_GELU_BIAS == CUBLASLT_EPILOGUE_GELU_BIAS);
static_assert(a::CUBLASLT_EPILOGUE_GELU_AUX_BIAS == CUBLASLT_EPILOGUE_GELU_AUX_BIAS);
static_assert(a::CUBLASLT_EPILOGUE_DGELU == CUBLASLT_EPILOGUE_DGELU);
static_assert(a::CUBLASLT_EPILOGUE_BGRADA == CUBLASLT_EPILOGUE_BGRADA);
static_assert(a::CUBLASLT_EPILOGUE_BGRADB == CUBLASLT_EPILOGUE_BGRADB);
static_assert(a::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);

// The entry points: each table slot has the parameter and result sizes of
// the function bound to it (handles are distinct types on either side).
template <typename R, typename... A>
constexpr size_t signature_size(R (*)(A...)) {
  return ((sizeof(A) * 1000) + ... + 0) + sizeof(R) * 100 + sizeof...(A);
}
#define SAME_SHAPE(slot, fn) \
  static_assert(signature_size(decltype(sx::cuda::DriverApi::slot){}) == signature_size(&fn), #fn)
SAME_SHAPE(init, cuInit);
SAME_SHAPE(device_total_mem, cuDeviceTotalMem_v2);
SAME_SHAPE(mem_get_info, cuMemGetInfo_v2);
SAME_SHAPE(mem_alloc, cuMemAlloc_v2);
SAME_SHAPE(mem_free, cuMemFree_v2);
SAME_SHAPE(mem_host_alloc, cuMemHostAlloc);
SAME_SHAPE(memcpy_htod_async, cuMemcpyHtoDAsync_v2);
SAME_SHAPE(memcpy_dtoh_async, cuMemcpyDtoHAsync_v2);
SAME_SHAPE(memcpy_dtod_async, cuMemcpyDtoDAsync_v2);
SAME_SHAPE(memset_d8_async, cuMemsetD8Async);
SAME_SHAPE(module_load_data, cuModuleLoadData);
SAME_SHAPE(module_get_function, cuModuleGetFunction);
SAME_SHAPE(launch_kernel, cuLaunchKernel);
SAME_SHAPE(stream_create, cuStreamCreate);
SAME_SHAPE(stream_query, cuStreamQuery);
SAME_SHAPE(stream_begin_capture, cuStreamBeginCapture_v2);
SAME_SHAPE(stream_end_capture, cuStreamEndCapture);
SAME_SHAPE(graph_instantiate, cuGraphInstantiateWithFlags);
SAME_SHAPE(graph_launch, cuGraphLaunch);
SAME_SHAPE(event_elapsed_time, cuEventElapsedTime_v2);
SAME_SHAPE(primary_ctx_retain, cuDevicePrimaryCtxRetain);
SAME_SHAPE(primary_ctx_release, cuDevicePrimaryCtxRelease_v2);
#undef SAME_SHAPE
#define SAME_SHAPE(slot, fn) \
  static_assert(signature_size(decltype(sx::cuda::CublasLtApi::slot){}) == signature_size(&fn), #fn)
SAME_SHAPE(matmul_desc_create, cublasLtMatmulDescCreate);
SAME_SHAPE(matmul_desc_set_attribute, cublasLtMatmulDescSetAttribute);
SAME_SHAPE(matrix_layout_create, cublasLtMatrixLayoutCreate);
SAME_SHAPE(matrix_layout_set_attribute, cublasLtMatrixLayoutSetAttribute);
SAME_SHAPE(preference_set_attribute, cublasLtMatmulPreferenceSetAttribute);
SAME_SHAPE(algo_get_heuristic, cublasLtMatmulAlgoGetHeuristic);
SAME_SHAPE(matmul, cublasLtMatmul);
#undef SAME_SHAPE

TEST(CudaAbi, DeclarationsMatchTheToolkitHeaders) {
  // The checks are the static_asserts above; this records that they ran.
  EXPECT_EQ(CUDA_VERSION / 1000, 13);
}
