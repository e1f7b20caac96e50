// Elementwise kernels: unary, binary with broadcasting, where, cast. Same-
// index loops, so each is safe in place (the plan relies on it).
#pragma GCC optimize("O3", "no-trapping-math", "fp-contract=off")  // vectorise at any build type, selects included
#include <cmath>
#include <limits>

#include "backend/cpu/isa.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/vmath.h"
#include "backend/cpu/where_row.h"
#include "util/error.h"
// The body, once per instruction set (isa.h).
#define SX_ISA_BODY "backend/cpu/k_elementwise.inc"
#include "backend/cpu/isa_clones.inc"

namespace sx::cpu {

void run_elementwise(const Args& a) { SX_DISPATCH(run_elementwise, a); }

void run_unary_binary(const Args& u, const Args& b, int slot) { SX_DISPATCH(run_unary_binary, u, b, slot); }

void run_binary_binary(const Args& u, const Args& b, int slot, const float* scale) {
  SX_DISPATCH(run_binary_binary, u, b, slot, scale);
}

}  // namespace sx::cpu
