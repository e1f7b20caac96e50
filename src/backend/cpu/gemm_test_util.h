#pragma once
// Shared by the product's tests (gemm_test, gemm_blocking_test,
// amx_bf16_test, bf16_units_test): a Gemm run serially or over a pool, with
// the scratch it asks for, bit-for-bit equality of results, a float's bits
// and DAZ (a denormal read as the zero of its sign).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backend/cpu/gemm.h"
#include "backend/cpu/thread_pool.h"

namespace sx::cpu::testing {

// g serially (threads 0) or over a pool of `threads`.
inline void run_gemm(const Gemm& g, int threads) {
  ThreadPool pool(std::max(threads, 1));
  std::vector<float> shared(static_cast<size_t>(gemm_shared_floats(g.m, g.k, g.n)));
  std::vector<std::vector<float>> scratch(static_cast<size_t>(pool.size()),
                                          std::vector<float>(static_cast<size_t>(gemm_thread_floats(g.n))));
  std::vector<float*> slots;
  for (auto& v : scratch) slots.push_back(v.data());
  if (threads == 0)
    gemm(g, slots[0]);
  else
    gemm(g, pool, shared.data(), slots.data());
}

inline bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

inline uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

inline float daz(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }

}  // namespace sx::cpu::testing
