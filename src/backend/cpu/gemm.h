#pragma once
// Our single-precision matrix product (the executor's matmuls and attention's
// two products). Every element of C is one fused multiply-add chain over k in
// order, starting from +0: c = fma(a[i,0], b[0,j], 0), then
// c = fma(a[i,p], b[p,j], c) for p = 1 .. k-1, then c * alpha when alpha is
// not 1. Blocking (k blocks keep their partial sums in C and carry on from
// them), tiling, threads and the instruction set change nothing in that
// chain, so the result is bit-identical whatever they are: the baseline
// build does the same chain with std::fma (correctly rounded, so equal to
// the hardware's fused multiply-add).
//
// Why not OpenBLAS: each of our tiles was its own cblas_sgemm call that
// packed its operands again, and OpenBLAS's result depends on where a
// product is cut, so our tiling could not follow the thread count or share
// one packed operand; here both operands are packed once per
// product and shared by every thread, and the AVX-512 kernel uses the
// full vector width (docs/performance.md).
#include <cstdint>

#include "backend/cpu/thread_pool.h"

namespace sx::cpu {

// C [m, n] = alpha * op(A) op(B), row-major. op(A) [m, k] is A [m, k] with
// row stride lda, or (ta) A [k, m] read transposed; op(B) [k, n] is B [k, n]
// with row stride ldb, or (tb) B [n, k] read transposed. C's row stride is ldc.
struct Gemm {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int64_t lda = 0;
  bool ta = false;
  const float* b = nullptr;
  int64_t ldb = 0;
  bool tb = false;
  float* c = nullptr;
  int64_t ldc = 0;
  float alpha = 1.0f;
};

// Per-thread scratch floats for a product with n columns (a packed block of
// each operand), whichever instruction set runs.
int64_t gemm_thread_floats(int64_t n);
// Shared scratch floats for a parallel product: both operands, packed.
int64_t gemm_shared_floats(int64_t m, int64_t k, int64_t n);
// Products below this many flops are not worth waking the pool for.
constexpr double kGemmParallelFlops = 4e6;

// On the calling thread; scratch holds gemm_thread_floats(g.n).
void gemm(const Gemm& g, float* scratch);
// Over the pool: both operands are packed once into `shared`
// (gemm_shared_floats), then row blocks x column groups run on the threads.
// Small products run inline, on scratch[0] (gemm_thread_floats).
void gemm(const Gemm& g, ThreadPool& pool, float* shared, float* const* scratch);

}  // namespace sx::cpu
