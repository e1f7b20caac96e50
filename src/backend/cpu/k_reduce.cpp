// Reductions over one axis of [outer, n, inner]. Each output is reduced by one
// task in a fixed order: contiguous lines (inner 1) in 16 lanes, strided ones
// sequentially over n while vectorised across inner (the reference's order).
#pragma GCC optimize("O3", "no-trapping-math")
#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/cpu/kernels.h"
#include "backend/cpu/lanes.h"
#include "backend/cpu/vmath.h"
#include "util/error.h"

namespace sx::cpu {

namespace {

struct Around {
  int64_t outer = 1, n = 1, inner = 1;
  Around(const Shape& s, int axis) {
    for (int d = 0; d < axis; ++d) outer *= s[d];
    n = s[axis];
    for (int d = axis + 1; d < s.rank; ++d) inner *= s[d];
  }
};

float float_line(Op op, const float* x, int64_t n) {
  switch (op) {
    case Op::Sum:
      return sum_lanes(x, n);
    case Op::Mean:
      return static_cast<float>(static_cast<double>(sum_lanes(x, n)) / static_cast<double>(n));
    case Op::Max: {
      float m = n ? x[0] : -std::numeric_limits<float>::infinity();
      for (int64_t j = 1; j < n; ++j) m = x[j] > m ? x[j] : m;
      return m;
    }
    case Op::LogSumExp: {
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < n; ++j) m = x[j] > m ? x[j] : m;
      if (std::isinf(m)) return m;
      return m + std::log(sum_lanes(x, n, [m](float v) { return exp_f(v - m); }));
    }
    default:
      SX_ASSERT(false, "not a float line reduction");
  }
  return 0;
}

template <typename V>
int32_t argmax_line(const V* x, int64_t n, int64_t stride) {
  int64_t best = 0;
  for (int64_t j = 1; j < n; ++j)
    if (x[j * stride] > x[best * stride]) best = j;
  return static_cast<int32_t>(best);
}

// Strided float reductions: y[i] for i in [ib, ie) of one outer slice.
void float_columns(Op op, const float* x, float* y, int64_t n, int64_t inner, int64_t ib, int64_t ie) {
  if (op == Op::Sum || op == Op::Mean) {
    for (int64_t i = ib; i < ie; ++i) y[i] = 0;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = ib; i < ie; ++i) y[i] += x[j * inner + i];
    if (op == Op::Mean)
      for (int64_t i = ib; i < ie; ++i)
        y[i] = static_cast<float>(static_cast<double>(y[i]) / static_cast<double>(n));
    return;
  }
  if (op == Op::Max) {
    for (int64_t i = ib; i < ie; ++i) y[i] = n ? x[i] : -std::numeric_limits<float>::infinity();
    for (int64_t j = 1; j < n; ++j)
      for (int64_t i = ib; i < ie; ++i) y[i] = x[j * inner + i] > y[i] ? x[j * inner + i] : y[i];
    return;
  }
  // logsumexp
  for (int64_t i = ib; i < ie; ++i) {
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < n; ++j) m = x[j * inner + i] > m ? x[j * inner + i] : m;
    if (std::isinf(m)) {
      y[i] = m;
      continue;
    }
    float acc = 0;
    for (int64_t j = 0; j < n; ++j) acc += exp_f(x[j * inner + i] - m);
    y[i] = m + std::log(acc);
  }
}

void int_columns(Op op, const int32_t* x, int32_t* y, int64_t n, int64_t inner, int64_t ib, int64_t ie) {
  for (int64_t i = ib; i < ie; ++i) {
    if (op == Op::Sum) {
      int64_t acc = 0;
      for (int64_t j = 0; j < n; ++j) acc += x[j * inner + i];
      y[i] = static_cast<int32_t>(acc);
    } else {  // max
      int32_t m = n ? x[i] : std::numeric_limits<int32_t>::lowest();
      for (int64_t j = 1; j < n; ++j) m = x[j * inner + i] > m ? x[j * inner + i] : m;
      y[i] = m;
    }
  }
}

constexpr int64_t kColumnBlock = 512;

}  // namespace

void run_reduce(const Args& a) {
  const Node& x = a.input(0);
  Around s(x.shape, a.n.attrs.axis);
  Op op = a.n.op;
  bool fx = is_float(x.dtype);
  int64_t blocks = (s.inner + kColumnBlock - 1) / kColumnBlock;
  int64_t work = std::max<int64_t>(1, s.n * std::min(s.inner, kColumnBlock));
  a.pool.for_range(s.outer * blocks, std::max<int64_t>(1, kGrain / work), [&](int64_t tb, int64_t te, int) {
    for (int64_t t = tb; t < te; ++t) {
      int64_t o = t / blocks, ib = t % blocks * kColumnBlock, ie = std::min(s.inner, ib + kColumnBlock);
      int64_t in_off = o * s.n * s.inner, out_off = o * s.inner;
      if (op == Op::Argmax) {
        for (int64_t i = ib; i < ie; ++i)
          a.io()[out_off + i] = fx ? argmax_line(a.f(0) + in_off + i, s.n, s.inner)
                                   : argmax_line(a.i(0) + in_off + i, s.n, s.inner);
      } else if (!fx) {
        int_columns(op, a.i(0) + in_off, a.io() + out_off, s.n, s.inner, ib, ie);
      } else if (s.inner == 1) {
        a.fo()[out_off] = float_line(op, a.f(0) + in_off, s.n);
      } else {
        float_columns(op, a.f(0) + in_off, a.fo() + out_off, s.n, s.inner, ib, ie);
      }
    }
  });
}

}  // namespace sx::cpu
