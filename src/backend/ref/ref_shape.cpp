// Shape ops: each computes, for every output element, where it comes from.
#include "backend/ref/kernels.h"

namespace sx::ref {

namespace {

// Index of out's element in `in` under a permutation (out dim d = in dim perm[d]).
std::vector<int64_t> permute_index(const Shape& in, const Shape& out, const std::array<int8_t, kMaxRank>& perm) {
  auto st = strides(in);
  std::array<int64_t, kMaxRank> step{};  // strides of in, reordered as out's dims
  for (int d = 0; d < out.rank; ++d) step[d] = st[perm[d]];
  return strided_index(out, step);
}

// out[o, j, i] += or = src[o, j', i] blocks, where an axis of `in` maps into
// an axis of `out` at an offset (slice, pad, concat).
template <typename T>
void place(const Tensor<T>& from, int64_t from_start, Tensor<T>& to, int64_t to_start, int64_t len, int axis) {
  AroundAxis f(from.shape, axis), t(to.shape, axis);
  for (int64_t o = 0; o < f.outer; ++o)
    for (int64_t j = 0; j < len; ++j) {
      int64_t src = (o * f.n + from_start + j) * f.inner, dst = (o * t.n + to_start + j) * t.inner;
      for (int64_t i = 0; i < f.inner; ++i) {
        if (is_float(to.dtype))
          to.f[dst + i] = from.f[src + i];
        else
          to.i[dst + i] = from.i[src + i];
      }
    }
}

}  // namespace

template <typename T>
void eval_shape(const Node& n, const Ins<T>& in, Tensor<T>& out) {
  const Tensor<T>& x = *in[0];
  int axis = n.attrs.axis;
  switch (n.op) {
    case Op::Reshape:
      out.f = x.f, out.i = x.i;
      return;
    case Op::Permute:
      return copy_by_index(x, permute_index(x.shape, out.shape, n.attrs.perm), out);
    case Op::Expand:
      return copy_by_index(x, broadcast_index(out.shape, x.shape), out);
    case Op::Slice:
      return place(x, n.attrs.start, out, 0, out.shape[axis], axis);
    case Op::Pad:
      return place(x, 0, out, n.attrs.start, x.shape[axis], axis);
    case Op::Concat: {
      int64_t at = 0;
      for (const Tensor<T>* part : in) {
        place(*part, 0, out, at, part->shape[axis], axis);
        at += part->shape[axis];
      }
      return;
    }
    case Op::SumTo: {
      auto idx = broadcast_index(x.shape, out.shape);
      for (size_t k = 0; k < idx.size(); ++k) {
        if (is_float(out.dtype))
          out.f[idx[k]] += x.f[k];
        else
          out.i[idx[k]] += x.i[k];
      }
      return;
    }
    case Op::Gather: {
      // x [outer, n, inner] and ids [m] give out [outer, m, inner].
      const Tensor<T>& ids = *in[1];
      AroundAxis s(x.shape, axis);
      int64_t m = ids.numel();
      for (int64_t j = 0; j < m; ++j) check_id(n, ids.i[j], s.n, j);
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t j = 0; j < m; ++j) {
          int64_t src = (o * s.n + ids.i[j]) * s.inner, dst = (o * m + j) * s.inner;
          for (int64_t i = 0; i < s.inner; ++i) {
            if (is_float(out.dtype))
              out.f[dst + i] = x.f[src + i];
            else
              out.i[dst + i] = x.i[src + i];
          }
        }
      return;
    }
    case Op::ScatterAdd: {
      // src [outer, m, inner] with ids [m] adds into out [outer, size, inner].
      const Tensor<T>& ids = *in[1];
      AroundAxis s(out.shape, axis);
      int64_t m = ids.numel();
      for (int64_t j = 0; j < m; ++j) check_id(n, ids.i[j], s.n, j);
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t j = 0; j < m; ++j) {
          int64_t src = (o * m + j) * s.inner, dst = (o * s.n + ids.i[j]) * s.inner;
          for (int64_t i = 0; i < s.inner; ++i) {
            if (is_float(out.dtype))
              out.f[dst + i] += x.f[src + i];
            else
              out.i[dst + i] += x.i[src + i];
          }
        }
      return;
    }
    default:
      SX_ASSERT(false, "not a shape op");
  }
}

template void eval_shape<float>(const Node&, const Ins<float>&, Tensor<float>&);
template void eval_shape<double>(const Node&, const Ins<double>&, Tensor<double>&);

}  // namespace sx::ref
