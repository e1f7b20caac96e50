// Fused attention: per (batch, query tile), scores by gemm.h into per-thread
// scratch, a masked softmax by row, then the product with V by gemm. The
// tasks' bounds depend only on the shapes, so results are bit-identical for
// any thread count; the softmax loops are compiled per instruction set.
#pragma GCC optimize("O3", "no-trapping-math", "fp-contract=off")
#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/cpu/gemm.h"
#include "backend/cpu/isa.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/lanes.h"
#include "backend/cpu/softmax_row.h"
#include "backend/cpu/vmath.h"

namespace sx::cpu {
namespace {
constexpr int64_t kTileQ = 64;  // query rows per attention task
// Tasks are grouped into chunks of at least kChunkFlops so that small
// attentions run inline (as matmul's units, k_matmul.cpp).
constexpr double kChunkFlops = 2e6;
int64_t tiles(int64_t n, int64_t t) { return std::max<int64_t>(1, (n + t - 1) / t); }
}  // namespace
}  // namespace sx::cpu

// The body, once per instruction set (isa.h).
#define SX_ISA_BODY "backend/cpu/k_attention.inc"
#include "backend/cpu/isa_clones.inc"

namespace sx::cpu {

// The scores of a query tile, then the products' packed operands.
int64_t attention_scratch(const Node& q, const Node& k, const Node& v) {
  int64_t keys = k.shape[k.shape.rank - 2];
  return std::min(kTileQ, q.shape[q.shape.rank - 2]) * keys + gemm_thread_floats(std::max(keys, v.shape.back()));
}

void run_attention(const Args& a) { SX_DISPATCH(run_attention, a); }

}  // namespace sx::cpu
