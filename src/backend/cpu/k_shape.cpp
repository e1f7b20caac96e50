// Shape ops: strided copies (permute, expand, slice, pad, concat), gathers,
// and the sums that undo broadcasting and gathering (sum-to, scatter-add),
// each output element summed in the reference's order.
#pragma GCC optimize("O3", "no-trapping-math")
#include <algorithm>
#include <cstring>

#include "backend/cpu/kernels.h"
#include "util/error.h"

namespace sx::cpu {

namespace {

constexpr int64_t kColumnBlock = 512;

// Copies over a Strided with operands (to, from).
void copy(const Args& a, const Strided& it, uint32_t* to, const uint32_t* from) {
  int64_t len = it.inner(), st = it.step(0), sf = it.step(1);
  a.pool.for_range(it.rows(), std::max<int64_t>(1, kGrain / std::max<int64_t>(len, 1)),
                   [&](int64_t rb, int64_t re, int) {
                     int64_t off[Strided::kOps];
                     for (int64_t r = rb; r < re; ++r) {
                       it.row(r, off);
                       uint32_t* y = to + off[0];
                       const uint32_t* x = from + off[1];
                       if (st == 1 && sf == 1)
                         std::memcpy(y, x, len * 4);
                       else
                         for (int64_t j = 0; j < len; ++j) y[j * st] = x[j * sf];
                     }
                   });
}

void zero(const Args& a) {
  a.pool.for_range(a.n.shape.numel(), kGrain * 4, [&](int64_t b, int64_t e, int) {
    std::memset(static_cast<char*>(a.out) + b * 4, 0, (e - b) * 4);
  });
}

struct Around {
  int64_t outer = 1, n = 1, inner = 1;
  Around(const Shape& s, int axis) {
    for (int d = 0; d < axis; ++d) outer *= s[d];
    n = s[axis];
    for (int d = axis + 1; d < s.rank; ++d) inner *= s[d];
  }
};

void gather(const Args& a) {
  Around s(a.input(0).shape, a.n.attrs.axis);
  const int32_t* ids = a.i(1);
  int64_t m = a.input(1).shape.numel();
  check_ids(a.n, ids, m, s.n);
  const uint32_t* x = static_cast<const uint32_t*>(a.in[0]);
  uint32_t* y = static_cast<uint32_t*>(a.out);
  a.pool.for_range(s.outer * m, std::max<int64_t>(1, kGrain / std::max<int64_t>(s.inner, 1)),
                   [&](int64_t b, int64_t e, int) {
                     for (int64_t t = b; t < e; ++t) {
                       int64_t o = t / m, j = t % m;
                       std::memcpy(y + t * s.inner, x + (o * s.n + ids[j]) * s.inner, s.inner * 4);
                     }
                   });
}

// out [outer, size, inner] += src [outer, m, inner] at ids, in order of j per
// element; tasks split outer and blocks of columns, never j.
template <typename T>
void scatter_add(const Args& a) {
  Around s(a.n.shape, a.n.attrs.axis);
  const int32_t* ids = a.i(1);
  int64_t m = a.input(1).shape.numel();
  check_ids(a.n, ids, m, s.n);
  zero(a);
  const T* x = static_cast<const T*>(a.in[0]);
  T* y = static_cast<T*>(a.out);
  int64_t blocks = (s.inner + kColumnBlock - 1) / kColumnBlock;
  int64_t work = std::max<int64_t>(1, m * std::min(s.inner, kColumnBlock));
  a.pool.for_range(s.outer * blocks, std::max<int64_t>(1, kGrain / work), [&](int64_t tb, int64_t te, int) {
    for (int64_t t = tb; t < te; ++t) {
      int64_t o = t / blocks, ib = t % blocks * kColumnBlock, ie = std::min(s.inner, ib + kColumnBlock);
      for (int64_t j = 0; j < m; ++j) {
        const T* src = x + (o * m + j) * s.inner;
        T* dst = y + (o * s.n + ids[j]) * s.inner;
        for (int64_t i = ib; i < ie; ++i) dst[i] += src[i];
      }
    }
  });
}

// prep.it walks the kept dimensions (out, x); prep.parts[0] the reduced ones (x).
template <typename T>
void sum_to(const Args& a) {
  const Strided &kept = a.prep.it, &red = a.prep.parts[0];
  const T* X = static_cast<const T*>(a.in[0]);
  T* Y = static_cast<T*>(a.out);
  int64_t len = kept.inner(), sy = kept.step(0), sx = kept.step(1);
  int64_t blocks = (len + kColumnBlock - 1) / kColumnBlock;
  int64_t work = std::max<int64_t>(
      1, a.input(0).shape.numel() / std::max<int64_t>(1, a.n.shape.numel()) * std::min(len, kColumnBlock));
  a.pool.for_range(
      kept.rows() * blocks, std::max<int64_t>(1, kGrain / work), [&](int64_t tb, int64_t te, int) {
        int64_t off[Strided::kOps], roff[Strided::kOps];
        for (int64_t t = tb; t < te; ++t) {
          int64_t r = t / blocks, jb = t % blocks * kColumnBlock, je = std::min(len, jb + kColumnBlock);
          kept.row(r, off);
          T* y = Y + off[0];
          for (int64_t j = jb; j < je; ++j) y[j * sy] = 0;
          int64_t rlen = red.inner(), rs = red.step(0);
          for (int64_t q = 0; q < red.rows(); ++q) {
            red.row(q, roff);
            for (int64_t l = 0; l < rlen; ++l) {
              const T* x = X + off[1] + roff[0] + l * rs;
              if (sy == 1 && sx == 1)
                for (int64_t j = jb; j < je; ++j) y[j] += x[j];
              else
                for (int64_t j = jb; j < je; ++j) y[j * sy] += x[j * sx];
            }
          }
        }
      });
}

}  // namespace

void run_shape(const Args& a) {
  uint32_t* out = static_cast<uint32_t*>(a.out);
  const uint32_t* x = static_cast<const uint32_t*>(a.in[0]);
  bool f = is_float(a.n.dtype);
  switch (a.n.op) {
    case Op::Reshape:
      if (a.out != a.in[0]) std::memcpy(a.out, a.in[0], a.n.shape.numel() * 4);
      return;
    case Op::Permute:
    case Op::Expand:
    case Op::Slice:
      return copy(a, a.prep.it, out, x);
    case Op::Pad:
      zero(a);
      return copy(a, a.prep.it, out, x);
    case Op::Concat:
      for (size_t k = 0; k < a.prep.parts.size(); ++k)
        copy(a, a.prep.parts[k], out, static_cast<const uint32_t*>(a.in[k]));
      return;
    case Op::Gather:
      return gather(a);
    case Op::ScatterAdd:
      return f ? scatter_add<float>(a) : scatter_add<int32_t>(a);
    case Op::SumTo:
      return f ? sum_to<float>(a) : sum_to<int32_t>(a);
    default:
      SX_ASSERT(false, "not a shape op");
  }
}

}  // namespace sx::cpu
