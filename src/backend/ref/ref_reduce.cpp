// Reductions over one axis, and batched matmul.
#include <cmath>
#include <limits>
#include <type_traits>

#include "backend/ref/kernels.h"

namespace sx::ref {

namespace {

template <typename T>
void matmul(const Tensor<T>& a, const Tensor<T>& b, Tensor<T>& out) {
  int64_t m = a.shape[a.shape.rank - 2], k = a.shape.back(), n = b.shape.back();
  Shape batch = out.shape, ba = a.shape, bb = b.shape;
  batch.rank -= 2, ba.rank -= 2, bb.rank -= 2;
  auto ia = broadcast_index(batch, ba), ib = broadcast_index(batch, bb);
  for (size_t p = 0; p < ia.size(); ++p) {
    const T* A = a.f.data() + ia[p] * m * k;  // (not &f[...]: an empty operand, k = 0, has no element 0)
    const T* B = b.f.data() + ib[p] * k * n;
    T* C = out.f.data() + p * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T acc = 0;
        for (int64_t l = 0; l < k; ++l) acc += A[i * k + l] * B[l * n + j];
        C[i * n + j] = acc;
      }
  }
}

// One reduction of the n values at x[o, :, i], stride `inner`.
template <typename V>
double reduce_line(Op op, const V* x, int64_t n, int64_t inner) {
  switch (op) {
    case Op::Sum:
    case Op::Mean: {
      std::conditional_t<std::is_integral_v<V>, int64_t, V> acc = 0;
      for (int64_t j = 0; j < n; ++j) acc += x[j * inner];
      return op == Op::Mean ? static_cast<double>(acc) / static_cast<double>(n) : static_cast<double>(acc);
    }
    case Op::Max: {
      V m = n ? x[0] : std::numeric_limits<V>::lowest();
      for (int64_t j = 1; j < n; ++j) m = x[j * inner] > m ? x[j * inner] : m;
      return static_cast<double>(n ? m : -std::numeric_limits<double>::infinity());
    }
    case Op::Argmax: {
      int64_t best = 0;
      for (int64_t j = 1; j < n; ++j)
        if (x[j * inner] > x[best * inner]) best = j;
      return static_cast<double>(best);
    }
    case Op::LogSumExp: {
      if constexpr (std::is_floating_point_v<V>) {
        V m = -std::numeric_limits<V>::infinity();
        for (int64_t j = 0; j < n; ++j) m = x[j * inner] > m ? x[j * inner] : m;
        if (std::isinf(m)) return static_cast<double>(m);
        V acc = 0;
        for (int64_t j = 0; j < n; ++j) acc += std::exp(x[j * inner] - m);
        return static_cast<double>(m + std::log(acc));
      }
      SX_ASSERT(false, "logsumexp of integers");
      return 0;
    }
    default:
      SX_ASSERT(false, "not a reduction");
  }
  return 0;
}

}  // namespace

template <typename T>
void eval_reduce(const Node& n, const Ins<T>& in, Tensor<T>& out) {
  if (n.op == Op::Matmul) return matmul(*in[0], *in[1], out);
  const Tensor<T>& x = *in[0];
  AroundAxis s(x.shape, n.attrs.axis);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      int64_t base = o * s.n * s.inner + i, k = o * s.inner + i;
      double v = is_float(x.dtype) ? reduce_line(n.op, x.f.data() + base, s.n, s.inner)
                                   : reduce_line(n.op, x.i.data() + base, s.n, s.inner);
      if (is_float(out.dtype))
        out.f[k] = static_cast<T>(v);
      else
        out.i[k] = static_cast<int32_t>(v);
    }
}

template void eval_reduce<float>(const Node&, const Ins<float>&, Tensor<float>&);
template void eval_reduce<double>(const Node&, const Ins<double>&, Tensor<double>&);

}  // namespace sx::ref
