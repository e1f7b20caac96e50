#pragma once
// Sums and dot products in 16 fixed lanes, combined in a fixed tree: the
// vectorised order of additions depends only on the length, never on the
// thread count or the machine, so results are reproducible everywhere.
#include <cstdint>

namespace sx::cpu {

constexpr int kLanes = 16;

// Always inlined, so that a kernel compiled for a wider instruction set (isa.h)
// inlines its `f` here (a default-target template cannot inline it).
[[gnu::always_inline]] inline float combine(float* acc) {
  // Unrolled, so that each level has a constant width: g++ then keeps the
  // halves in registers (a rolled loop went through the stack, scalar).
#pragma GCC unroll 4
  for (int w = kLanes / 2; w > 0; w /= 2)
#pragma GCC unroll 8
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  return acc[0];
}

// sum of term(j) for j < n.
template <typename F>
[[gnu::always_inline]] inline float sum_lanes_of(int64_t n, F term) {
  float acc[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += term(j + l);
  for (int l = 0; j + l < n; ++l) acc[l] += term(j + l);
  return combine(acc);
}

// A mean as every reduction over a row takes it: the f32 sum divided by n
// in double, rounded once.
[[gnu::always_inline]] inline float mean_of_sum(float sum, int64_t n) {
  return static_cast<float>(static_cast<double>(sum) / static_cast<double>(n));
}

// sum of f(x[j]) for j < n.
template <typename F>
[[gnu::always_inline]] inline float sum_lanes(const float* x, int64_t n, F f) {
  return sum_lanes_of(n, [x, f](int64_t j) { return f(x[j]); });
}

[[gnu::always_inline]] inline float sum_lanes(const float* x, int64_t n) {
  return sum_lanes(x, n, [](float v) { return v; });
}

}  // namespace sx::cpu
