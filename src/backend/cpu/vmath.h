#pragma once
// Branch-free float math that g++ vectorises inside plain loops (libm calls
// block vectorisation). exp_f is Cephes' expf: range reduction by ln 2 and a
// degree-5 polynomial, within 2 ulp of expf on its range; exactly 0 below
// -87.3 (so masked scores of -inf give exact zeros) and +inf above 88.0 (so
// that 2^n stays a normal float; callers exponentiate max-shifted values).
// Rounding uses the 1.5 * 2^23 trick, not floorf, so plain SSE2 vectorises
// it, and 2^n is made from the rounded sum's bits (its low bits hold n:
// unsigned arithmetic, so no conversion of an out-of-range float to int,
// which C++ leaves undefined). So no clamp: outside [lo, hi] the polynomial
// runs on anything and the two selects at the end replace what it gives.
// (A clamp, written as selects or as max and min, came out as some 13
// compares, masks and blends a vector, g++ folding the clamped values'
// exponentials into constants to blend in: a quarter of gelu_f.) The same
// values as the clamped form for every input (all 2^32 compared, built for
// AVX2 and for baseline x86-64), save that a signalling NaN comes back quiet.
#include <cstdint>
#include <cstring>

namespace sx::cpu {

// exp_f, gelu_f and gelu_grad_f are written once, over K values side by
// side (the `_k` templates), of float (K = 1: the functions themselves,
// which g++ vectorises in plain loops) or of a GCC vector of floats with U
// its vector of uint32_t (K vectors, each step of the K chains one after
// the other: in a product's tile, rows of two vectors, gelu_f's loop ran
// one chain of some 25 dependent steps at a time, 25-30 cycles a vector on
// a Zen 3; four side by side ran 1.15-1.25x faster. A long row's loop
// overlaps its iterations itself: the softmax's exponentials gained
// nothing). Each lane takes the float function's operations in its order,
// so its bits.
#define SX_EACH_K _Pragma("GCC unroll 8") for (int k = 0; k < K; ++k)

// GCC vectors of W floats (F) and of W uint32_t (U), for the _k forms (in a
// class template: a vector_size typedef in a function template loses it).
template <int W>
struct Lanes {
  typedef float F __attribute__((vector_size(W * 4)));
  typedef uint32_t U __attribute__((vector_size(W * 4)));
};

template <int K, typename F, typename U>
[[gnu::always_inline]] inline void exp_k(const F* x, F* y) {
  const float hi = 88.0f, lo = -87.3365447505531f;
  F t[K], n[K], r[K], p[K];
  SX_EACH_K t[k] = x[k] * 1.44269504088896341f + 12582912.0f;
  SX_EACH_K n[k] = t[k] - 12582912.0f;
  SX_EACH_K r[k] = x[k] - n[k] * 0.693359375f;
  SX_EACH_K r[k] = r[k] - n[k] * -2.12194440e-4f;
  SX_EACH_K p[k] = 1.9875691500e-4f * r[k] + 1.3981999507e-3f;
  SX_EACH_K p[k] = p[k] * r[k] + 8.3334519073e-3f;
  SX_EACH_K p[k] = p[k] * r[k] + 4.1665795894e-2f;
  SX_EACH_K p[k] = p[k] * r[k] + 1.6666665459e-1f;
  SX_EACH_K p[k] = p[k] * r[k] + 5.0000001201e-1f;
  SX_EACH_K p[k] = p[k] * r[k] * r[k] + r[k] + 1.0f;
  SX_EACH_K {
    // t = 1.5 * 2^23 + n in [2^23, 2^24), where a float's unit is 1: its
    // bits are 0x4b400000 + n, and 2^n's are (n + 127) << 23.
    U bits = (__builtin_bit_cast(U, t[k]) + (127u - 0x4b400000u)) << 23;
    F v = p[k] * __builtin_bit_cast(F, bits);
    v = x[k] < lo ? 0.0f : v;
    y[k] = x[k] <= hi ? v : x[k] + __builtin_inff();  // above hi: inf; a NaN: itself, quiet
  }
}

inline float exp_f(float x) {
  float y;
  exp_k<1, float, uint32_t>(&x, &y);
  return y;
}

constexpr float kGeluC = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluA = 0.044715f;

// exp(-2u) for gelu's u = kGeluC (x + kGeluA x^3), -2u as (-2 kGeluC) (...)
// in one product: doubling is exact, so the two round alike but where u is
// subnormal, and there exp_f gives 1 either way.
template <int K, typename F, typename U>
[[gnu::always_inline]] inline void exp_minus_2u_k(const F* x, F* e) {
  F m[K];
  SX_EACH_K m[k] = (-2.0f * kGeluC) * (x[k] + kGeluA * x[k] * x[k] * x[k]);
  exp_k<K, F, U>(m, e);
}

// 0.5 x (1 + tanh(u)) written as x * sigmoid(2u): the same function, with no
// cancellation and no tanh call.
template <int K, typename F, typename U>
[[gnu::always_inline]] inline void gelu_k(const F* x, F* y) {
  F e[K];
  exp_minus_2u_k<K, F, U>(x, e);
  SX_EACH_K y[k] = x[k] / (1.0f + e[k]);
}

// d gelu / dx with s = sigmoid(2u): 1 + tanh u = 2s and 1 - tanh^2 u = 4s(1 - s).
template <int K, typename F, typename U>
[[gnu::always_inline]] inline void gelu_grad_k(const F* x, F* y) {
  F e[K];
  exp_minus_2u_k<K, F, U>(x, e);
  SX_EACH_K {
    F s = 1.0f / (1.0f + e[k]);
    y[k] = s + 2.0f * x[k] * s * (1.0f - s) * kGeluC * (1.0f + 3.0f * kGeluA * x[k] * x[k]);
  }
}
#undef SX_EACH_K

inline float gelu_f(float x) {
  float y;
  gelu_k<1, float, uint32_t>(&x, &y);
  return y;
}

inline float gelu_grad_f(float x) {
  float y;
  gelu_grad_k<1, float, uint32_t>(&x, &y);
  return y;
}

inline float sigmoid_f(float x) { return 1.0f / (1.0f + exp_f(-x)); }

// The largest |x[j]| for j < n, as its bits: at least 0x7f800000 where one
// is inf or NaN. An integer max over the bits, which g++ vectorises.
inline uint32_t max_magnitude_bits(const float* x, int64_t n) {
  uint32_t most = 0;
  for (int64_t j = 0; j < n; ++j) {
    uint32_t b;
    std::memcpy(&b, x + j, 4);
    b &= 0x7fffffffu;
    most = b > most ? b : most;
  }
  return most;
}

// Round-to-nearest-even to bfloat16 of a float's bits b, in place, kept in
// f32 (as the reference's round_bf16): inf and NaN stay, a carry out of the
// mantissa rounds up to the next binade or to inf. Branch-free; U is
// uint32_t or a GCC vector of them (the bf16 units' kernel store, gemm.cpp;
// by reference: a 64-byte vector passed by value warns of its ABI).
template <typename U>
[[gnu::always_inline]] inline void round_bf16_bits(U& b) {
  U r = (b + 0x7fffu + ((b >> 16) & 1u)) & 0xffff0000u;
  b = (b & 0x7f800000u) == 0x7f800000u ? b : r;
}

// round_bf16_bits of a float, so that the loops calling it vectorise.
inline float round_bf16_f(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  round_bf16_bits(b);
  float y;
  std::memcpy(&y, &b, 4);
  return y;
}

// round_bf16_f over rows x cols floats, rows ld apart, in place (inlined:
// vectorised for the caller's instruction set).
[[gnu::always_inline]] inline void round_rows_bf16(float* x, int64_t rows, int64_t cols, int64_t ld) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) x[i * ld + j] = round_bf16_f(x[i * ld + j]);
}

}  // namespace sx::cpu
