// Reductions over one axis of [outer, n, inner]. Each output is reduced by one
// task in a fixed order: contiguous lines (inner 1) in 16 lanes, strided ones
// sequentially over n while vectorised across inner (the reference's order).
#pragma GCC optimize("O3", "no-trapping-math", "fp-contract=off")
#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/cpu/isa.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/lanes.h"
#include "backend/cpu/softmax_row.h"
#include "backend/cpu/vmath.h"
#include "util/error.h"
// The body, once per instruction set (isa.h).
#define SX_ISA_BODY "backend/cpu/k_reduce.inc"
#include "backend/cpu/isa_clones.inc"

namespace sx::cpu {

void run_reduce(const Args& a) { SX_DISPATCH(run_reduce, a); }
void run_mul_reduce(const Args& u, const Args& b) { SX_DISPATCH(run_mul_reduce, u, b); }

}  // namespace sx::cpu
