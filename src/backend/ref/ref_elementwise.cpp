// Elementwise ops: unary, binary with broadcasting, where, cast; the
// per-element definitions are elementwise.h's.
#include <cmath>
#include <limits>

#include "backend/ref/elementwise.h"
#include "backend/ref/kernels.h"

namespace sx::ref {

namespace {

// Writes v into element k of out, converting to out's dtype.
template <typename T>
void put(Tensor<T>& out, int64_t k, double v) {
  if (is_float(out.dtype))
    out.f[k] = static_cast<T>(v);
  else if (out.dtype == DType::Bool)
    out.i[k] = v != 0;
  else
    out.i[k] = to_int(v);
}

}  // namespace

template <typename T>
void eval_elementwise(const Node& n, const Ins<T>& in, Tensor<T>& out) {
  int64_t count = out.numel();
  if (n.op == Op::Cast) {
    // Float to float stays in T so a cast never loses what T holds.
    for (int64_t k = 0; k < count; ++k) {
      if (is_float(out.dtype) && is_float(in[0]->dtype))
        out.f[k] = in[0]->f[k];
      else
        put(out, k, in[0]->get(k));
    }
    return;
  }
  if (op_kind(n.op) == OpKind::Unary) {
    const Tensor<T>& x = *in[0];
    for (int64_t k = 0; k < count; ++k) {
      if (is_float(x.dtype))
        out.f[k] = unary_float(n.op, x.f[k]);
      else
        out.i[k] = unary_int(n.op, x.i[k]);
    }
    return;
  }
  if (n.op == Op::Where) {
    auto ic = broadcast_index(out.shape, in[0]->shape);
    auto ia = broadcast_index(out.shape, in[1]->shape);
    auto ib = broadcast_index(out.shape, in[2]->shape);
    for (int64_t k = 0; k < count; ++k) {
      const Tensor<T>& pick = in[0]->i[ic[k]] ? *in[1] : *in[2];
      int64_t at = in[0]->i[ic[k]] ? ia[k] : ib[k];
      if (is_float(out.dtype) && is_float(pick.dtype))
        out.f[k] = pick.f[at];
      else
        put(out, k, pick.get(at));
    }
    return;
  }
  const Tensor<T>&a = *in[0], &b = *in[1];
  auto ia = broadcast_index(out.shape, a.shape);
  auto ib = broadcast_index(out.shape, b.shape);
  bool cmp = out.dtype == DType::Bool;
  for (int64_t k = 0; k < count; ++k) {
    if (cmp)
      out.i[k] = compare(n.op, a.get(ia[k]), b.get(ib[k]));
    else if (is_float(out.dtype))
      out.f[k] = binary_float(n.op, a.f[ia[k]], b.f[ib[k]]);
    else
      out.i[k] = binary_int(n.op, a.i[ia[k]], b.i[ib[k]]);
  }
}

template void eval_elementwise<float>(const Node&, const Ins<float>&, Tensor<float>&);
template void eval_elementwise<double>(const Node&, const Ins<double>&, Tensor<double>&);

}  // namespace sx::ref
