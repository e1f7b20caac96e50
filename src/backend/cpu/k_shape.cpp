// Shape ops: strided copies (permute, expand, slice, pad, concat), gathers,
// and the sums that undo broadcasting and gathering (sum-to, scatter-add),
// each output element summed in the reference's order.
#pragma GCC optimize("O3", "no-trapping-math", "fp-contract=off")
#include <algorithm>
#include <cstring>

#include "backend/cpu/isa.h"
#include "backend/cpu/kernels.h"
#include "util/error.h"

// The body, once per instruction set (isa.h).
#define SX_ISA_BODY "backend/cpu/k_shape.inc"
#include "backend/cpu/isa_clones.inc"

namespace sx::cpu {

void run_shape(const Args& a) { SX_DISPATCH(run_shape, a); }

}  // namespace sx::cpu
