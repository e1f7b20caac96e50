// Elementwise kernels: unary, binary with broadcasting, where, cast. Same-
// index loops, so each is safe in place (the plan relies on it).
#pragma GCC optimize("O3", "no-trapping-math")  // vectorise at any build type, selects included
#include <cmath>
#include <limits>

#include "backend/cpu/kernels.h"
#include "backend/cpu/vmath.h"
#include "util/error.h"

namespace sx::cpu {

namespace {

template <typename TI, typename TO, typename F>
void unary_loop(const Args& a, F f) {
  const TI* x = static_cast<const TI*>(a.in[0]);
  TO* y = static_cast<TO*>(a.out);
  a.pool.for_range(a.n.shape.numel(), kGrain, [&](int64_t b, int64_t e, int) {
#pragma GCC ivdep  // y may be x (in place): same index, no carried dependence
    for (int64_t k = b; k < e; ++k) y[k] = f(x[k]);
  });
}

void unary_float(const Args& a) {
  switch (a.n.op) {
    case Op::Neg:
      return unary_loop<float, float>(a, [](float x) { return -x; });
    case Op::Exp:
      return unary_loop<float, float>(a, [](float x) { return exp_f(x); });
    case Op::Log:
      return unary_loop<float, float>(a, [](float x) { return std::log(x); });
    case Op::Sqrt:
      return unary_loop<float, float>(a, [](float x) { return std::sqrt(x); });
    case Op::Rsqrt:
      return unary_loop<float, float>(a, [](float x) { return 1.0f / std::sqrt(x); });
    case Op::Sin:
      return unary_loop<float, float>(a, [](float x) { return std::sin(x); });
    case Op::Cos:
      return unary_loop<float, float>(a, [](float x) { return std::cos(x); });
    case Op::Tanh:
      return unary_loop<float, float>(a, [](float x) { return std::tanh(x); });
    case Op::Sigmoid:
      return unary_loop<float, float>(a, [](float x) { return sigmoid_f(x); });
    case Op::Relu:
      return unary_loop<float, float>(a, [](float x) { return x > 0.0f ? x : 0.0f; });
    case Op::Gelu:
      return unary_loop<float, float>(a, [](float x) { return gelu_f(x); });
    case Op::Silu:
      return unary_loop<float, float>(a, [](float x) { return x * sigmoid_f(x); });
    case Op::Abs:
      return unary_loop<float, float>(a, [](float x) { return std::fabs(x); });
    case Op::Sign:
      return unary_loop<float, float>(a, [](float x) { return float((x > 0.0f) - (x < 0.0f)); });
    case Op::GeluGrad:
      return unary_loop<float, float>(a, [](float x) { return gelu_grad_f(x); });
    default:
      SX_ASSERT(false, "not a float unary op");
  }
}

void unary_int(const Args& a) {
  switch (a.n.op) {
    case Op::Neg:
      return unary_loop<int32_t, int32_t>(a, [](int32_t x) { return int32_t(0u - uint32_t(x)); });
    case Op::Abs:
      return unary_loop<int32_t, int32_t>(a, [](int32_t x) { return x < 0 ? int32_t(0u - uint32_t(x)) : x; });
    case Op::Sign:
      return unary_loop<int32_t, int32_t>(a, [](int32_t x) { return (x > 0) - (x < 0); });
    case Op::Relu:
      return unary_loop<int32_t, int32_t>(a, [](int32_t x) { return x > 0 ? x : 0; });
    default:
      SX_ASSERT(false, "not an integer unary op");
  }
}

// Float to int truncates toward zero and saturates; NaN becomes 0 (as the reference).
int32_t to_int(float v) {
  if (v != v) return 0;
  if (v >= 2147483647.0f) return std::numeric_limits<int32_t>::max();
  if (v <= -2147483648.0f) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
}

void cast(const Args& a) {
  DType from = a.input(0).dtype, to = a.n.dtype;
  bool ff = is_float(from), ft = is_float(to);
  if (ff && ft) return unary_loop<float, float>(a, [](float x) { return x; });  // bf16 rounding follows
  if (ff && to == DType::Bool)
    return unary_loop<float, int32_t>(a, [](float x) { return int32_t(x != 0.0f); });
  if (ff) return unary_loop<float, int32_t>(a, to_int);
  if (ft) return unary_loop<int32_t, float>(a, [](int32_t x) { return static_cast<float>(x); });
  if (to == DType::Bool) return unary_loop<int32_t, int32_t>(a, [](int32_t x) { return int32_t(x != 0); });
  unary_loop<int32_t, int32_t>(a, [](int32_t x) { return x; });
}

// One row of a binary op, specialised for the common contiguous and broadcast
// steps. ivdep: y may be a or b (in place), read and written at one index.
template <typename TA, typename TO, typename F>
void binary_row(TO* y, const TA* a, const TA* b, int64_t len, int64_t sa, int64_t sb, F f) {
  if (sa == 1 && sb == 1) {
#pragma GCC ivdep
    for (int64_t j = 0; j < len; ++j) y[j] = f(a[j], b[j]);
  } else if (sa == 1 && sb == 0) {
#pragma GCC ivdep
    for (int64_t j = 0; j < len; ++j) y[j] = f(a[j], b[0]);
  } else if (sa == 0 && sb == 1) {
#pragma GCC ivdep
    for (int64_t j = 0; j < len; ++j) y[j] = f(a[0], b[j]);
  } else {
    for (int64_t j = 0; j < len; ++j) y[j] = f(a[j * sa], b[j * sb]);
  }
}

// out = f(a, b) over a Strided with operands (out, a, b).
template <typename TA, typename TO, typename F>
void binary_loop(const Args& args, F f) {
  const Strided& it = args.prep.it;
  const TA* A = static_cast<const TA*>(args.in[0]);
  const TA* B = static_cast<const TA*>(args.in[1]);
  TO* Y = static_cast<TO*>(args.out);
  int64_t len = it.inner(), sa = it.step(1), sb = it.step(2);
  int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(len, 1));
  args.pool.for_range(it.rows(), grain, [&](int64_t rb, int64_t re, int) {
    int64_t off[Strided::kOps];
    for (int64_t r = rb; r < re; ++r) {
      it.row(r, off);
      binary_row(Y + off[0], A + off[1], B + off[2], len, sa, sb, f);
    }
  });
}

template <typename T>
void compare(const Args& a) {
  switch (a.n.op) {
    case Op::Eq:
      return binary_loop<T, int32_t>(a, [](T x, T y) { return int32_t(x == y); });
    case Op::Ne:
      return binary_loop<T, int32_t>(a, [](T x, T y) { return int32_t(x != y); });
    case Op::Lt:
      return binary_loop<T, int32_t>(a, [](T x, T y) { return int32_t(x < y); });
    case Op::Le:
      return binary_loop<T, int32_t>(a, [](T x, T y) { return int32_t(x <= y); });
    case Op::Gt:
      return binary_loop<T, int32_t>(a, [](T x, T y) { return int32_t(x > y); });
    case Op::Ge:
      return binary_loop<T, int32_t>(a, [](T x, T y) { return int32_t(x >= y); });
    default:
      SX_ASSERT(false, "not a comparison");
  }
}

void binary(const Args& a) {
  if (a.n.dtype == DType::Bool) return is_float(a.input(0).dtype) ? compare<float>(a) : compare<int32_t>(a);
  if (is_float(a.n.dtype)) {
    switch (a.n.op) {
      case Op::Add:
        return binary_loop<float, float>(a, [](float x, float y) { return x + y; });
      case Op::Sub:
        return binary_loop<float, float>(a, [](float x, float y) { return x - y; });
      case Op::Mul:
        return binary_loop<float, float>(a, [](float x, float y) { return x * y; });
      case Op::Div:
        return binary_loop<float, float>(a, [](float x, float y) { return x / y; });
      case Op::Pow:
        return binary_loop<float, float>(a, [](float x, float y) { return std::pow(x, y); });
      case Op::Maximum:
        return binary_loop<float, float>(a, [](float x, float y) { return x >= y ? x : y; });
      case Op::Minimum:
        return binary_loop<float, float>(a, [](float x, float y) { return x <= y ? x : y; });
      default:
        SX_ASSERT(false, "not a float binary op");
    }
  }
  // i32 wraps like the reference's int64 arithmetic cast back to int32.
  switch (a.n.op) {
    case Op::Add:
      return binary_loop<int32_t, int32_t>(
          a, [](int32_t x, int32_t y) { return int32_t(uint32_t(x) + uint32_t(y)); });
    case Op::Sub:
      return binary_loop<int32_t, int32_t>(
          a, [](int32_t x, int32_t y) { return int32_t(uint32_t(x) - uint32_t(y)); });
    case Op::Mul:
      return binary_loop<int32_t, int32_t>(
          a, [](int32_t x, int32_t y) { return int32_t(uint32_t(x) * uint32_t(y)); });
    case Op::Maximum:
      return binary_loop<int32_t, int32_t>(a, [](int32_t x, int32_t y) { return x >= y ? x : y; });
    case Op::Minimum:
      return binary_loop<int32_t, int32_t>(a, [](int32_t x, int32_t y) { return x <= y ? x : y; });
    default:
      SX_ASSERT(false, "not an integer binary op");
  }
}

// The branches may be f32 and bf16 (stored alike) but not mixed with ints.
void where(const Args& a) {
  const Strided& it = a.prep.it;
  const int32_t* C = a.i(0);
  const uint32_t* A = static_cast<const uint32_t*>(a.in[1]);
  const uint32_t* B = static_cast<const uint32_t*>(a.in[2]);
  uint32_t* Y = static_cast<uint32_t*>(a.out);
  int64_t len = it.inner(), sc = it.step(1), sa = it.step(2), sb = it.step(3);
  a.pool.for_range(it.rows(), std::max<int64_t>(1, kGrain / std::max<int64_t>(len, 1)),
                   [&](int64_t rb, int64_t re, int) {
                     int64_t off[Strided::kOps];
                     for (int64_t r = rb; r < re; ++r) {
                       it.row(r, off);
                       uint32_t* y = Y + off[0];
                       const int32_t* c = C + off[1];
                       const uint32_t *x = A + off[2], *z = B + off[3];
#pragma GCC ivdep
                       for (int64_t j = 0; j < len; ++j) y[j] = c[j * sc] ? x[j * sa] : z[j * sb];
                     }
                   });
}

}  // namespace

void run_elementwise(const Args& a) {
  if (a.n.op == Op::Cast) return cast(a);
  switch (op_kind(a.n.op)) {
    case OpKind::Unary:
      return is_float(a.input(0).dtype) ? unary_float(a) : unary_int(a);
    case OpKind::Binary:
      return binary(a);
    case OpKind::Ternary:
      return where(a);
    default:
      SX_ASSERT(false, "not an elementwise op");
  }
}

}  // namespace sx::cpu
