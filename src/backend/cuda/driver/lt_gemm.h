#pragma once
// A kir::Gemm (cuBLAS's column-major terms: D = alpha op(A) op(B) + beta D)
// as the cuBLASLt descriptors that compute it: plain values, so that the
// translation is tested without a GPU; real_gpu.cpp creates them.
#include <cstdint>
#include <string>

#include "backend/cuda/driver/cuda_types.h"
#include "backend/cuda/kir.h"

namespace sx::cuda {

struct LtMatrix {
  int type = api::CUDA_R_32F;
  uint64_t rows = 0, cols = 0;  // as stored (column-major), before op()
  int64_t ld = 0;
  int32_t batch = 1;
  int64_t stride = 0;  // elements between batches; 0: one matrix for every batch
};

struct LtGemm {
  int compute = api::CUBLAS_COMPUTE_32F;
  int scale_type = api::CUDA_R_32F;
  int32_t trans_a = api::CUBLAS_OP_N, trans_b = api::CUBLAS_OP_N;
  int32_t epilogue = api::CUBLASLT_EPILOGUE_DEFAULT;
  int bias_type = api::CUDA_R_32F;
  int aux_type = api::CUDA_R_32F;
  int64_t aux_ld = 0;
  int64_t aux_stride = 0;  // aux elements between batches
  bool needs_bias = false, needs_aux = false, needs_bias_grad = false;
  LtMatrix a, b, d;
};

int lt_data_type(kir::Type t);
LtGemm lt_gemm(const kir::Gemm& g);
// What decides the descriptors and the algorithm (no pointers): the cache
// key of the chosen algorithm, one heuristic query per distinct key.
std::string lt_gemm_key(const kir::Gemm& g);

}  // namespace sx::cuda
