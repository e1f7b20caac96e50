#pragma once
// The few types and constants of the CUDA driver API and cuBLASLt that
// sexpgpu uses, declared here so that no CUDA header is needed to build and
// nothing links to libcuda or libcublasLt. abi_test.cpp checks each against
// the toolkit's own headers where they are installed.
#include <cstddef>
#include <cstdint>

namespace sx::cuda::api {

// Driver API (cuda.h).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
constexpr CUresult CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;

constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
constexpr unsigned CU_EVENT_DEFAULT = 0x0;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;
constexpr unsigned kMemHostAllocPortable = 0x1;  // CU_MEMHOSTALLOC_PORTABLE, a macro in cuda.h
constexpr int CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;

// cuBLASLt (cublasLt.h, cublas_api.h, library_types.h).
using cublasStatus_t = int;
using cublasLtHandle_t = struct cublasLtContext*;
using cublasLtMatmulDesc_t = struct cublasLtMatmulDescOpaque_t*;
using cublasLtMatrixLayout_t = struct cublasLtMatrixLayoutOpaque_t*;
using cublasLtMatmulPreference_t = struct cublasLtMatmulPreferenceOpaque_t*;

struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};

constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;
constexpr cublasStatus_t CUBLAS_STATUS_NOT_INITIALIZED = 1;
constexpr cublasStatus_t CUBLAS_STATUS_NOT_SUPPORTED = 15;

// cudaDataType
constexpr int CUDA_R_32F = 0;
constexpr int CUDA_R_16BF = 14;
// cublasComputeType_t
constexpr int CUBLAS_COMPUTE_32F = 68;
constexpr int CUBLAS_COMPUTE_32F_FAST_TF32 = 77;
// cublasOperation_t
constexpr int32_t CUBLAS_OP_N = 0;
constexpr int32_t CUBLAS_OP_T = 1;
// cublasLtOrder_t
constexpr int32_t CUBLASLT_ORDER_COL = 0;
constexpr int32_t CUBLASLT_ORDER_ROW = 1;
// cublasLtMatrixLayoutAttribute_t
constexpr int CUBLASLT_MATRIX_LAYOUT_ORDER = 1;
constexpr int CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5;
constexpr int CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6;
// cublasLtMatmulDescAttributes_t
constexpr int CUBLASLT_MATMUL_DESC_TRANSA = 3;
constexpr int CUBLASLT_MATMUL_DESC_TRANSB = 4;
constexpr int CUBLASLT_MATMUL_DESC_EPILOGUE = 7;
constexpr int CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8;
constexpr int CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE = 10;
constexpr int CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER = 11;
constexpr int CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD = 12;
constexpr int CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE = 13;
constexpr int CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE = 22;
constexpr int CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26;
// cublasLtEpilogue_t
constexpr int32_t CUBLASLT_EPILOGUE_DEFAULT = 1;
constexpr int32_t CUBLASLT_EPILOGUE_BIAS = 4;
constexpr int32_t CUBLASLT_EPILOGUE_GELU = 32;
constexpr int32_t CUBLASLT_EPILOGUE_GELU_AUX = 32 | 128;
constexpr int32_t CUBLASLT_EPILOGUE_GELU_BIAS = 32 | 4;
constexpr int32_t CUBLASLT_EPILOGUE_GELU_AUX_BIAS = 32 | 128 | 4;
constexpr int32_t CUBLASLT_EPILOGUE_DGELU = 64 | 128;
constexpr int32_t CUBLASLT_EPILOGUE_BGRADA = 256;
constexpr int32_t CUBLASLT_EPILOGUE_BGRADB = 512;
// cublasLtMatmulPreferenceAttributes_t
constexpr int CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1;

}  // namespace sx::cuda::api
