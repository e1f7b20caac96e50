// Row-wise fused ops (softmax, norms, cross-entropy), embed, dropout, copies
// and constant leaves. Rows are independent tasks; the one cross-row sum
// (cross-entropy's mean) adds per-row values in row order on one thread.
#pragma GCC optimize("O3", "no-trapping-math")
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "backend/cpu/kernels.h"
#include "backend/cpu/lanes.h"
#include "backend/cpu/vmath.h"
#include "graph/philox.h"
#include "util/error.h"

namespace sx::cpu {

namespace {

int64_t row_grain(int64_t d) { return std::max<int64_t>(1, kGrain / std::max<int64_t>(d, 1)); }

// Softmax or log-softmax of a contiguous row; y may be x.
void softmax_row(const float* x, float* y, int64_t n, bool log) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < n; ++j) m = x[j] > m ? x[j] : m;
  if (log) {
    float lse = m + std::log(sum_lanes(x, n, [m](float v) { return exp_f(v - m); }));
#pragma GCC ivdep
    for (int64_t j = 0; j < n; ++j) y[j] = x[j] - lse;
    return;
  }
#pragma GCC ivdep
  for (int64_t j = 0; j < n; ++j) y[j] = exp_f(x[j] - m);
  float sum = sum_lanes(y, n);
  for (int64_t j = 0; j < n; ++j) y[j] = y[j] / sum;
}

void softmax(const Args& a) {
  const Shape& s = a.n.shape;
  int axis = a.n.attrs.axis;
  int64_t outer = 1, n = s[axis], inner = 1;
  for (int d = 0; d < axis; ++d) outer *= s[d];
  for (int d = axis + 1; d < s.rank; ++d) inner *= s[d];
  bool log = a.n.op == Op::LogSoftmax;
  const float* X = a.f(0);
  float* Y = a.fo();
  if (inner == 1) {
    a.pool.for_range(outer, row_grain(n), [&](int64_t b, int64_t e, int) {
      for (int64_t r = b; r < e; ++r) softmax_row(X + r * n, Y + r * n, n, log);
    });
    return;
  }
  // A strided axis: one line at a time (never in place, see plan).
  a.pool.for_range(outer * inner, row_grain(n), [&](int64_t b, int64_t e, int) {
    for (int64_t t = b; t < e; ++t) {
      const float* x = X + t / inner * n * inner + t % inner;
      float* y = Y + (x - X);
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < n; ++j) m = x[j * inner] > m ? x[j * inner] : m;
      float sum = 0;
      for (int64_t j = 0; j < n; ++j) sum += exp_f(x[j * inner] - m);
      for (int64_t j = 0; j < n; ++j)
        y[j * inner] = log ? x[j * inner] - m - std::log(sum) : exp_f(x[j * inner] - m) / sum;
    }
  });
}

void norm(const Args& a) {
  bool layer = a.n.op == Op::LayerNorm;
  int64_t d = a.n.shape.back(), rows = d ? a.n.shape.numel() / d : 0;
  const float *X = a.f(0), *gain = a.f(1), *bias = layer ? a.f(2) : nullptr;
  float eps = static_cast<float>(a.n.attrs.value);
  a.pool.for_range(rows, row_grain(d), [&](int64_t b, int64_t e, int) {
    for (int64_t r = b; r < e; ++r) {
      const float* x = X + r * d;
      float* y = a.fo() + r * d;
      float mu = layer ? sum_lanes(x, d) / static_cast<float>(d) : 0.0f;
      float var = sum_lanes(x, d, [mu](float v) { return (v - mu) * (v - mu); });
      float rstd = 1.0f / std::sqrt(var / static_cast<float>(d) + eps);
      if (layer) {
#pragma GCC ivdep
        for (int64_t j = 0; j < d; ++j) y[j] = (x[j] - mu) * rstd * gain[j] + bias[j];
      } else {
#pragma GCC ivdep
        for (int64_t j = 0; j < d; ++j) y[j] = x[j] * rstd * gain[j];
      }
    }
  });
}

void embed(const Args& a) {
  const int32_t* ids = a.i(0);
  const Shape& table = a.input(1).shape;
  int64_t count = a.input(0).shape.numel(), d = table[1];
  check_ids(a.n, ids, count, table[0]);
  a.pool.for_range(count, row_grain(d), [&](int64_t b, int64_t e, int) {
    for (int64_t j = b; j < e; ++j) std::memcpy(a.fo() + j * d, a.f(1) + ids[j] * d, d * 4);
  });
}

// Cross-entropy or accuracy: per-row values into scratch, then their mean.
void per_target(const Args& a) {
  const int32_t* targets = a.i(1);
  int64_t vocab = a.input(0).shape.back(), rows = a.input(1).shape.numel();
  check_ids(a.n, targets, rows, vocab);
  float* per_row = a.scratch[0];
  bool ce = a.n.op == Op::CrossEntropy;
  a.pool.for_range(rows, row_grain(vocab), [&](int64_t b, int64_t e, int) {
    for (int64_t r = b; r < e; ++r) {
      const float* l = a.f(0) + r * vocab;
      float m = -std::numeric_limits<float>::infinity();
      int64_t best = 0;
      for (int64_t j = 0; j < vocab; ++j)
        if (l[j] > m) m = l[j], best = j;
      if (!ce) {
        per_row[r] = best == targets[r];
        continue;
      }
      float sum = sum_lanes(l, vocab, [m](float v) { return exp_f(v - m); });
      per_row[r] = m + std::log(sum) - l[targets[r]];
    }
  });
  float total = 0;
  for (int64_t r = 0; r < rows; ++r) total += per_row[r];
  a.fo()[0] = rows ? total / static_cast<float>(rows) : std::numeric_limits<float>::quiet_NaN();
}

// One Philox block serves four elements; chunks start at multiples of 4.
void dropout(const Args& a) {
  const Attrs& at = a.n.attrs;
  float scale = static_cast<float>(1.0 / (1.0 - at.value));
  int64_t count = a.n.shape.numel();
  philox::Key key{static_cast<uint32_t>(at.seed), static_cast<uint32_t>(at.seed >> 32)};
  a.pool.for_range((count + 3) / 4, kGrain / 4, [&](int64_t b, int64_t e, int) {
    for (int64_t blk = b; blk < e; ++blk) {
      philox::Block bits =
          philox::philox4x32_10({static_cast<uint32_t>(blk), at.stream, static_cast<uint32_t>(a.rng_offset),
                                 static_cast<uint32_t>(a.rng_offset >> 32)},
                                key);
      for (int64_t w = 0; w < 4 && blk * 4 + w < count; ++w) {
        int64_t el = blk * 4 + w;
        a.fo()[el] = philox::uniform(bits[w]) >= at.value ? a.f(0)[el] * scale : 0.0f;
      }
    }
  });
}

}  // namespace

void check_ids(const Node& n, const int32_t* ids, int64_t count, int64_t size) {
  for (int64_t j = 0; j < count; ++j)
    if (ids[j] < 0 || ids[j] >= size)
      throw user_error(Code::SHAPE_012, n.span,
                       "{}: expected ids in [0, {}), found {} (element {} of the ids)", op_name(n.op), size,
                       ids[j], j);
}

void run_fused(const Args& a) {
  switch (a.n.op) {
    case Op::Softmax:
    case Op::LogSoftmax:
      return softmax(a);
    case Op::LayerNorm:
    case Op::RmsNorm:
      return norm(a);
    case Op::Attention:
      return run_attention(a);
    case Op::Embed:
      return embed(a);
    case Op::CrossEntropy:
    case Op::Accuracy:
      return per_target(a);
    case Op::Dropout:
      return dropout(a);
    case Op::StopGradient:
    case Op::Tap:
      if (a.out != a.in[0]) std::memcpy(a.out, a.in[0], a.n.shape.numel() * 4);
      return;
    default:
      SX_ASSERT(false, "not a fused or control op");
  }
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
