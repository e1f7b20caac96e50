#pragma once
// One row of a where, for the where op (k_elementwise.inc) and the fused
// where + softmax (k_fused.inc), which had each written the loop: y[j] =
// c[j] ? x[j] : z[j] over each operand's step, the values' bits copied.
#include <cstdint>

namespace sx::cpu {

// ivdep: y may be x or z (in place), read and written at one index.
[[gnu::always_inline]] inline void where_row(uint32_t* y, const int32_t* c, const uint32_t* x, const uint32_t* z,
                                             int64_t len, int64_t sc, int64_t sa, int64_t sb) {
  if (sc == 1 && sa == 1 && sb == 0) {
    // A contiguous row against a scalar fill (attention's causal mask): one
    // vectorised compare and blend, where runtime strides left a branch per
    // element.
    const uint32_t fill = z[0];
#pragma GCC ivdep
    for (int64_t j = 0; j < len; ++j) y[j] = c[j] ? x[j] : fill;
    return;
  }
#pragma GCC ivdep
  for (int64_t j = 0; j < len; ++j) y[j] = c[j * sc] ? x[j * sa] : z[j * sb];
}

}  // namespace sx::cpu
