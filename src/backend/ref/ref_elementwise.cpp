// Elementwise ops: unary, binary with broadcasting, where, cast.
#include <cmath>
#include <limits>

#include "backend/ref/kernels.h"

namespace sx::ref {

namespace {

constexpr double kGeluC = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluA = 0.044715;

template <typename T>
T unary_float(Op op, T x) {
  switch (op) {
    case Op::Neg:
      return -x;
    case Op::Exp:
      return std::exp(x);
    case Op::Log:
      return std::log(x);
    case Op::Sqrt:
      return std::sqrt(x);
    case Op::Rsqrt:
      return T(1) / std::sqrt(x);
    case Op::Sin:
      return std::sin(x);
    case Op::Cos:
      return std::cos(x);
    case Op::Tanh:
      return std::tanh(x);
    case Op::Sigmoid:
      return T(1) / (T(1) + std::exp(-x));
    case Op::Relu:
      return x > T(0) ? x : T(0);
    case Op::Gelu:
      return T(0.5) * x * (T(1) + std::tanh(T(kGeluC) * (x + T(kGeluA) * x * x * x)));
    case Op::Silu:
      return x / (T(1) + std::exp(-x));
    case Op::Abs:
      return std::abs(x);
    case Op::Sign:
      return T((x > T(0)) - (x < T(0)));
    case Op::GeluGrad: {
      T t = std::tanh(T(kGeluC) * (x + T(kGeluA) * x * x * x));
      return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * T(kGeluC) * (T(1) + T(3 * kGeluA) * x * x);
    }
    case Op::RoundBf16:
      return round_bf16(x);
    default:
      SX_ASSERT(false, "not a float unary op");
  }
  return x;
}

int32_t unary_int(Op op, int32_t x) {
  switch (op) {
    case Op::Neg:
      return static_cast<int32_t>(-int64_t{x});
    case Op::Abs:
      return static_cast<int32_t>(std::abs(int64_t{x}));
    case Op::Sign:
      return (x > 0) - (x < 0);
    case Op::Relu:
      return x > 0 ? x : 0;
    default:
      SX_ASSERT(false, "not an integer unary op");
  }
  return x;
}

template <typename T>
T binary_float(Op op, T a, T b) {
  switch (op) {
    case Op::Add:
      return a + b;
    case Op::Sub:
      return a - b;
    case Op::Mul:
      return a * b;
    case Op::Div:
      return a / b;
    case Op::Pow:
      return std::pow(a, b);
    case Op::Maximum:
      return a >= b ? a : b;
    case Op::Minimum:
      return a <= b ? a : b;
    default:
      SX_ASSERT(false, "not a float binary op");
  }
  return a;
}

int32_t binary_int(Op op, int64_t a, int64_t b) {
  switch (op) {
    case Op::Add:
      return static_cast<int32_t>(a + b);
    case Op::Sub:
      return static_cast<int32_t>(a - b);
    case Op::Mul:
      return static_cast<int32_t>(a * b);
    case Op::Maximum:
      return static_cast<int32_t>(a >= b ? a : b);
    case Op::Minimum:
      return static_cast<int32_t>(a <= b ? a : b);
    default:
      SX_ASSERT(false, "not an integer binary op");
  }
  return 0;
}

bool compare(Op op, double a, double b) {
  switch (op) {
    case Op::Eq:
      return a == b;
    case Op::Ne:
      return a != b;
    case Op::Lt:
      return a < b;
    case Op::Le:
      return a <= b;
    case Op::Gt:
      return a > b;
    case Op::Ge:
      return a >= b;
    default:
      SX_ASSERT(false, "not a comparison");
  }
  return false;
}

// Float to int truncates toward zero and saturates; NaN becomes 0.
int32_t to_int(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 2147483647.0) return std::numeric_limits<int32_t>::max();
  if (v <= -2147483648.0) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
}

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
