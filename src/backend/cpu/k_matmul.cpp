// Matrix products through OpenBLAS sgemm, and fused attention built on it.
// OpenBLAS runs single-threaded (the executor sets it): parallelism is ours,
// over tiles whose bounds depend only on the shapes, so every sgemm call —
// and so every bit of the result — is the same for any thread count.
#pragma GCC optimize("O3", "no-trapping-math")
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/cpu/kernels.h"
#include "backend/cpu/lanes.h"
#include "backend/cpu/vmath.h"

namespace sx::cpu {

namespace {
constexpr int64_t kTileM = 64;   // rows of C per sgemm call
constexpr int64_t kTileN = 512;  // columns of C per sgemm call
constexpr int64_t kTileQ = 64;   // query rows per attention task

int64_t tiles(int64_t n, int64_t t) { return std::max<int64_t>(1, (n + t - 1) / t); }
}  // namespace

void run_matmul(const Args& a) {
  const Shape &sa = a.input(0).shape, &sb = a.input(1).shape;
  int64_t m = sa[sa.rank - 2], k = sa.back(), n = sb.back();
  int64_t batches = static_cast<int64_t>(a.prep.batch.size() / 2);
  int64_t tm = tiles(m, kTileM), tn = tiles(n, kTileN);
  const float *A = a.f(0), *B = a.f(1);
  float* C = a.fo();
  if (k == 0) {
    std::fill(C, C + a.n.shape.numel(), 0.0f);
    return;
  }
  a.pool.run(batches * tm * tn, [&](int64_t tb, int64_t te, int) {
    for (int64_t t = tb; t < te; ++t) {
      int64_t p = t / (tm * tn), i0 = t / tn % tm * kTileM, j0 = t % tn * kTileN;
      int64_t rows = std::min(kTileM, m - i0), cols = std::min(kTileN, n - j0);
      if (rows <= 0 || cols <= 0) continue;
      // A folded transpose is its source, [k, m] or [n, k], read with sgemm's trans flag.
      bool trans_a = a.prep.trans[0], trans_b = a.prep.trans[1];
      const float* Ap = A + a.prep.batch[2 * p] * m * k + (trans_a ? i0 : i0 * k);
      const float* Bp = B + a.prep.batch[2 * p + 1] * k * n + (trans_b ? j0 * k : j0);
      float* Cp = C + p * m * n + i0 * n + j0;
      cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                  static_cast<int>(rows), static_cast<int>(cols), static_cast<int>(k), 1.0f, Ap,
                  static_cast<int>(trans_a ? m : k), Bp, static_cast<int>(trans_b ? k : n), 0.0f, Cp,
                  static_cast<int>(n));
    }
  });
}

int64_t attention_scratch(const Node& q, const Node& k) {
  return std::min(kTileQ, q.shape[q.shape.rank - 2]) * k.shape[k.shape.rank - 2];
}

void run_attention(const Args& a) {
  const Shape &sq = a.input(0).shape, &sk = a.input(1).shape, &sv = a.input(2).shape;
  int r = sq.rank;
  int64_t tq = sq[r - 2], tk = sk[r - 2], d = sq.back(), dv = sv.back();
  int64_t batch = tq * d != 0 ? sq.numel() / (tq * d) : 0, qt = tiles(tq, kTileQ);
  float scale = static_cast<float>(a.n.attrs.value);
  bool causal = a.n.attrs.causal;
  a.pool.run(batch * qt, [&](int64_t tb, int64_t te, int thread) {
    float* S = a.scratch[thread];
    for (int64_t t = tb; t < te; ++t) {
      int64_t b = t / qt, i0 = t % qt * kTileQ, rows = std::min(kTileQ, tq - i0);
      if (rows <= 0) continue;
      // Keys a causal tile can see: j <= i + tk - tq for its last row.
      int64_t keys = causal ? std::clamp<int64_t>(i0 + rows + tk - tq, 0, tk) : tk;
      const float* Q = a.f(0) + (b * tq + i0) * d;
      const float* K = a.f(1) + b * tk * d;
      const float* V = a.f(2) + b * tk * dv;
      float* O = a.fo() + (b * tq + i0) * dv;
      if (keys > 0 && d > 0)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows), static_cast<int>(keys),
                    static_cast<int>(d), scale, Q, static_cast<int>(d), K, static_cast<int>(d), 0.0f, S,
                    static_cast<int>(keys));
      else
        std::fill(S, S + rows * keys, 0.0f);
      for (int64_t i = 0; i < rows; ++i) {
        float* s = S + i * keys;
        int64_t seen = causal ? std::clamp<int64_t>(i0 + i + tk - tq + 1, 0, keys) : keys;
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < seen; ++j) m = s[j] > m ? s[j] : m;
        for (int64_t j = 0; j < seen; ++j) s[j] = exp_f(s[j] - m);
        float sum = sum_lanes(s, seen);
        for (int64_t j = 0; j < seen; ++j) s[j] = s[j] / sum;
        for (int64_t j = seen; j < keys; ++j) s[j] = 0.0f;
        if (seen == 0)  // every key masked: the reference's softmax of all -inf
          for (int64_t j = 0; j < keys; ++j) s[j] = std::numeric_limits<float>::quiet_NaN();
      }
      if (keys > 0 && dv > 0)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(dv),
                    static_cast<int>(keys), 1.0f, S, static_cast<int>(keys), V, static_cast<int>(dv), 0.0f, O,
                    static_cast<int>(dv));
      else
        std::fill(O, O + rows * dv, keys > 0 || tk == 0 ? 0.0f : std::numeric_limits<float>::quiet_NaN());
    }
  });
}

}  // namespace sx::cpu
