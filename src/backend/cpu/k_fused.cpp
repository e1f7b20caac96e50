// Row-wise fused ops (softmax, norms, cross-entropy), embed, dropout, copies
// and constant leaves. Rows are independent tasks; the one cross-row sum
// (cross-entropy's mean) adds per-row values in row order on one thread.
#pragma GCC optimize("O3", "no-trapping-math", "fp-contract=off")
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "backend/cpu/isa.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/lanes.h"
#include "backend/cpu/softmax_row.h"
#include "backend/cpu/vmath.h"
#include "backend/cpu/where_row.h"
#include "graph/philox.h"
#include "util/error.h"
// The body, once per instruction set (isa.h).
#define SX_ISA_BODY "backend/cpu/k_fused.inc"
#include "backend/cpu/isa_clones.inc"

namespace sx::cpu {

void run_fused(const Args& a) { SX_DISPATCH(run_fused, a); }
void run_where_softmax(const Args& u, const Args& b) { SX_DISPATCH(run_where_softmax, u, b); }

void check_ids(const Node& n, const int32_t* ids, int64_t count, int64_t size) {
  for (int64_t j = 0; j < count; ++j)
    if (ids[j] < 0 || ids[j] >= size)
      throw user_error(Code::SHAPE_012, n.span, "{}: expected ids in [0, {}), found {} (element {} of the ids)",
                       op_name(n.op), size, ids[j], j);
}

void run_leaf(const Args& a) {
  int64_t count = a.n.shape.numel();
  bool f = is_float(a.n.dtype);
  if (a.n.op == Op::Full) {
    if (f)
      std::fill(a.fo(), a.fo() + count, static_cast<float>(a.n.attrs.value));
    else
      std::fill(a.io(), a.io() + count, static_cast<int32_t>(a.n.attrs.value));
    return;
  }
  SX_ASSERT(a.n.op == Op::Arange, "not a computed leaf");
  for (int64_t k = 0; k < count; ++k) {
    if (f)
      a.fo()[k] = static_cast<float>(k);
    else
      a.io()[k] = static_cast<int32_t>(k);
  }
}

}  // namespace sx::cpu
