#pragma once
// The definition of every elementwise op on one element: the reference
// backend's loops (ref_elementwise.cpp) and the CUDA kernel-IR interpreter
// (backend/cuda/kir_interp.cpp) both call these, so an op is defined once.
// Inline: the interpreter calls them in its inner loops.
#include <cmath>
#include <cstdint>
#include <limits>

#include "backend/ref/kernels.h"
#include "graph/op.h"
#include "util/error.h"

namespace sx::ref {

inline constexpr double kGeluC = 0.7978845608028654;  // sqrt(2 / pi)
inline constexpr double kGeluA = 0.044715;

template <typename T>
inline T unary_float(Op op, T x) {
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

inline int32_t unary_int(Op op, int32_t x) {
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
inline T binary_float(Op op, T a, T b) {
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

inline int32_t binary_int(Op op, int64_t a, int64_t b) {
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

inline bool compare(Op op, double a, double b) {
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
inline int32_t to_int(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 2147483647.0) return std::numeric_limits<int32_t>::max();
  if (v <= -2147483648.0) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
}

inline bool is_comparison(Op op) {
  return op == Op::Eq || op == Op::Ne || op == Op::Lt || op == Op::Le || op == Op::Gt || op == Op::Ge;
}

}  // namespace sx::ref
