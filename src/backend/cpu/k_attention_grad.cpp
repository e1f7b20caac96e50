// Attention's backward one head at a time (kernels.h's AttentionGradSteps):
// the intermediates of a head in per-thread scratch, each element computed
// by the operations the unfused steps' kernels use (gemm.h, where_row.h,
// softmax_row.h, lanes.h, binary_row.inc), so the same bits; heads are
// independent tasks, so the same for any thread count.
#pragma GCC optimize("O3", "no-trapping-math", "fp-contract=off")
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/gemm.h"
#include "backend/cpu/isa.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/lanes.h"
#include "backend/cpu/softmax_row.h"
#include "backend/cpu/vmath.h"
#include "backend/cpu/where_row.h"
#include "util/error.h"
// The body, once per instruction set (isa.h).
#define SX_ISA_BODY "backend/cpu/k_attention_grad.inc"
#include "backend/cpu/isa_clones.inc"

namespace sx::cpu {

namespace {
int64_t round16(int64_t n) { return (n + 15) / 16 * 16; }
}  // namespace

// S, P, dP, dS (rows x keys each), r, one row of the pair's first step and
// the per-row and per-key lengths (Held), then a product's packed operands.
int64_t attention_grad_held(int64_t rows, int64_t keys) {
  return round16(4 * rows * keys + rows + keys + 2 * rows + keys);  // the lengths: int32, a float's size
}

int64_t attention_grad_scratch(int64_t rows, int64_t keys, int64_t widest_product) {
  return attention_grad_held(rows, keys) + gemm_thread_floats(widest_product);
}

int64_t run_attention_grad(const AttentionGradSteps& s, ThreadPool& pool, float* const* scratch) {
  SX_DISPATCH(run_attention_grad, s, pool, scratch);
}

}  // namespace sx::cpu
