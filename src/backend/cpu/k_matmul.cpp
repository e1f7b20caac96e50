// Matrix products through OpenBLAS sgemm (fused attention, built on it, is in
// k_attention.cpp).
// OpenBLAS runs single-threaded (the executor sets it): parallelism is ours,
// over tiles whose bounds depend only on the shapes, so every sgemm call —
// and so every bit of the result — is the same for any thread count.
#pragma GCC optimize("O3", "no-trapping-math")
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/cpu/kernels.h"

namespace sx::cpu {

namespace {
// A product is cut into at most kMaxPieces tiles (fewer when there are
// batches to share out), each of at least kPieceFlops; units are grouped into
// chunks of at least kChunkFlops so that small products run inline, without
// waking the pool. All depend only on the shapes.
constexpr int64_t kMaxPieces = 8;
constexpr double kPieceFlops = 8e6;
constexpr double kChunkFlops = 2e6;

int64_t tiles(int64_t n, int64_t t) { return std::max<int64_t>(1, (n + t - 1) / t); }
int64_t round_up(int64_t n, int64_t q) { return (n + q - 1) / q * q; }
}  // namespace

void plan_matmul_tiles(const Graph& g, const Node& node, Prep& p) {
  const Shape &sa = g.node(node.inputs[0]).shape, &sb = g.node(node.inputs[1]).shape;
  MatmulTiles& t = p.mm;
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
  int64_t want = std::max<int64_t>(1, kMaxPieces / std::max<int64_t>(1, t.batches)), pieces = 1;
  while (pieces * 2 <= want && flops / static_cast<double>(pieces * 2) >= kPieceFlops) pieces *= 2;
  // Cutting rows repacks B ([k, n]) per tile, cutting columns repacks A ([m, k]):
  // cut the side that makes the smaller repacking.
  t.tile_m = std::max<int64_t>(t.m, 1), t.tile_n = std::max<int64_t>(t.n, 1);
  if (pieces > 1 && t.n <= t.m)
    t.tile_m = std::max<int64_t>(16, round_up((t.m + pieces - 1) / pieces, 16));
  else if (pieces > 1)
    t.tile_n = std::max<int64_t>(16, round_up((t.n + pieces - 1) / pieces, 16));
  t.tm = tiles(t.m, t.tile_m), t.tn = tiles(t.n, t.tile_n);
  int64_t units = t.batches * t.tm * t.tn;
  double chunk = std::max(1.0, flops * static_cast<double>(t.batches) / kChunkFlops);
  t.chunks = std::clamp<int64_t>(static_cast<int64_t>(chunk), 1, std::max<int64_t>(units, 1));
}

void run_matmul(const Args& a) {
  const MatmulTiles& t = a.prep.mm;
  const float *A = a.f(0), *B = a.f(1);
  float* C = a.fo();
  if (t.k == 0) {
    std::fill(C, C + a.n.shape.numel(), 0.0f);
    return;
  }
  int64_t m = t.m, n = t.n, k = t.k, units = t.batches * t.tm * t.tn, per = t.tm * t.tn;
  bool trans_a = a.prep.trans[0], trans_b = a.prep.trans[1];
  a.pool.run(t.chunks, [&](int64_t cb, int64_t ce, int) {
    for (int64_t u = cb * units / t.chunks, ue = ce * units / t.chunks; u < ue; ++u) {
      int64_t p = u / per, i0 = u / t.tn % t.tm * t.tile_m, j0 = u % t.tn * t.tile_n;
      int64_t rows = std::min(t.tile_m, m - i0), cols = std::min(t.tile_n, n - j0);
      if (rows <= 0 || cols <= 0) continue;
      // A folded transpose is its source, [k, m] or [n, k], read with sgemm's trans flag.
      int64_t ia = t.merged ? 0 : a.prep.batch[2 * p], ib = a.prep.batch[2 * p + 1];
      const float* Ap = A + ia * m * k + (trans_a ? i0 : i0 * k);
      const float* Bp = B + ib * k * n + (trans_b ? j0 * k : j0);
      float* Cp = C + p * m * n + i0 * n + j0;
      cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                  static_cast<int>(rows), static_cast<int>(cols), static_cast<int>(k), 1.0f, Ap,
                  static_cast<int>(trans_a ? m : k), Bp, static_cast<int>(trans_b ? k : n), 0.0f, Cp,
                  static_cast<int>(n));
    }
  });
}

}  // namespace sx::cpu
