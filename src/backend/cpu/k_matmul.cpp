// Matrix products through gemm.h (fused attention, built on it, is in
// k_attention.cpp). Every element is one fused multiply-add chain over k in
// order whatever the tiling, so results are bit-identical for any thread
// count.
#include <algorithm>

#include "backend/cpu/gemm.h"
#include "backend/cpu/kernels.h"
#include "util/error.h"

namespace sx::cpu {

void plan_matmul(const Graph& g, const Node& node, Prep& p) {
  const Shape &sa = g.node(node.inputs[0]).shape, &sb = g.node(node.inputs[1]).shape;
  MatmulShape& t = p.mm;
  t.m = sa[sa.rank - 2], t.k = sa.back(), t.n = sb.back();
  t.batches = static_cast<int64_t>(p.batch.size() / 2);
  // x [batch..., m, k] . w [k, n]: the batches are consecutive rows of one product.
  bool merge = t.batches > 1 && !p.trans[0];
  for (int64_t q = 0; merge && q < t.batches; ++q) merge = p.batch[2 * q] == q && p.batch[2 * q + 1] == p.batch[1];
  if (merge) {
    t.merged = true;
    t.m *= t.batches;
    t.batches = 1;
  }
  double flops = 2.0 * static_cast<double>(t.m) * static_cast<double>(t.n) * static_cast<double>(t.k);
  double chunk = flops * static_cast<double>(t.batches) / (kGemmParallelFlops / 2);
  t.chunks = std::clamp<int64_t>(static_cast<int64_t>(chunk), 1, std::max<int64_t>(t.batches, 1));
  p.scratch_floats = gemm_thread_floats(t.n);
  if (t.batches == 1) p.shared_floats = gemm_shared_floats(t.m, t.k, t.n);
}

Gemm matmul_product(const Args& a, int64_t p) {
  const MatmulShape& t = a.prep.mm;
  bool ta = a.prep.trans[0], tb = a.prep.trans[1];
  // A folded transpose is its source, [k, m] or [n, k], read transposed.
  Gemm g;
  g.m = t.m, g.n = t.n, g.k = t.k;
  g.a = a.f(0) + (t.merged ? 0 : a.prep.batch[2 * p]) * t.m * t.k, g.lda = ta ? t.m : t.k, g.ta = ta;
  g.b = a.f(1) + a.prep.batch[2 * p + 1] * t.k * t.n, g.ldb = tb ? t.k : t.n, g.tb = tb;
  g.c = a.fo() + p * t.m * t.n, g.ldc = t.n;
  g.alpha = t.alpha;
  g.bf16 = a.prep.bf16;
  return g;
}

void run_matmul(const Args& a, const float* bias, const Gemm* then) {
  const MatmulShape& t = a.prep.mm;
  bool round = then && then->round_output;
  bool elementwise = then && then->then != Gemm::Then::None;
  SX_ASSERT(!round || a.prep.bf16, "an f32 product's output rounded to bf16 in its tiles");
  SX_ASSERT(!elementwise || t.batches == 1, "an elementwise step fused into a batched product");
  SX_ASSERT(!(then && then->colsum) || t.batches == 1, "a column sum fused into a batched product");
  auto product = [&](int64_t p) {
    Gemm g = matmul_product(a, p);
    g.bias = bias;
    if (then) {  // the extras product_extras set
      g.round_output = then->round_output;
      g.then = then->then, g.then_x = then->then_x, g.then_out = then->then_out, g.ldo = then->ldo;
      g.colsum = then->colsum, g.colsum_rounded = then->colsum_rounded;
    }
    return g;
  };
  if (t.batches == 1) return gemm(product(0), a.pool, a.shared, a.scratch);
  a.pool.run(t.chunks, [&](int64_t cb, int64_t ce, int slot) {
    for (int64_t p = cb * t.batches / t.chunks, pe = ce * t.batches / t.chunks; p < pe; ++p)
      gemm(product(p), a.scratch[slot]);
  });
}

}  // namespace sx::cpu
