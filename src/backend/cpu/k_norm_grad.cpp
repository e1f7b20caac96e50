// LayerNorm's input gradient row by row (kernels.h's NormGradRows): each
// value computed by the operation the unfused steps' kernels use (lanes.h's
// sums, a mean as their sum over n in double, 1 / sqrt), so the same bits;
// rows are independent tasks, so the same for any thread count.
#pragma GCC optimize("O3", "no-trapping-math", "fp-contract=off")
#include <algorithm>
#include <cmath>

#include "backend/cpu/isa.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/lanes.h"
// The body, once per instruction set (isa.h).
#define SX_ISA_BODY "backend/cpu/k_norm_grad.inc"
#include "backend/cpu/isa_clones.inc"

namespace sx::cpu {

void run_layer_norm_grad(const NormGradRows& a, ThreadPool& pool) {
  SX_DISPATCH(run_layer_norm_grad, a, pool);
}

}  // namespace sx::cpu
