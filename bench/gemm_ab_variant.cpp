// bench/gemm_ab.sh's variant side: built with the namespace sx renamed to
// sxB (-Dsx=sxB) beside the variant's copy of the product, it hands
// gemm_ab.cpp the variant's product and pool through C names, which the
// renaming leaves alone, so that the harness needs none of sxB's types.
#include "backend/cpu/gemm.h"

extern "C" {
void* sx_gemm_ab_variant_pool(int threads) { return new sx::cpu::ThreadPool(threads); }
void sx_gemm_ab_variant_free_pool(void* pool) { delete static_cast<sx::cpu::ThreadPool*>(pool); }
// g: the harness's sx::cpu::Gemm, the same layout (the same header).
void sx_gemm_ab_variant(const void* g, void* pool, float* shared, float* const* scratch) {
  const auto& product = *static_cast<const sx::cpu::Gemm*>(g);
  if (pool)
    sx::cpu::gemm(product, *static_cast<sx::cpu::ThreadPool*>(pool), shared, scratch);
  else
    sx::cpu::gemm(product, scratch[0]);
}
}
