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

inline float exp_f(float x) {
  const float hi = 88.0f, lo = -87.3365447505531f;
  float t = x * 1.44269504088896341f + 12582912.0f;
  float n = t - 12582912.0f;
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  uint32_t t_bits;
  std::memcpy(&t_bits, &t, 4);
  // t = 1.5 * 2^23 + n in [2^23, 2^24), where a float's unit is 1: its bits
  // are 0x4b400000 + n, and 2^n's are (n + 127) << 23.
  uint32_t bits = (t_bits + (127u - 0x4b400000u)) << 23;
  float scale;
  std::memcpy(&scale, &bits, 4);
  float y = p * scale;
  y = x < lo ? 0.0f : y;
  return x <= hi ? y : x + __builtin_inff();  // above hi: inf; a NaN: itself, quiet
}

constexpr float kGeluC = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluA = 0.044715f;

// -2u for gelu's u = kGeluC (x + kGeluA x^3), as (-2 kGeluC) (...) in one
// product: doubling is exact, so the two round alike but where u is
// subnormal, and there exp_f gives 1 either way.
inline float gelu_minus_2u(float x) { return (-2.0f * kGeluC) * (x + kGeluA * x * x * x); }

// 0.5 x (1 + tanh(u)) written as x * sigmoid(2u): the same function, with no
// cancellation and no tanh call.
inline float gelu_f(float x) { return x / (1.0f + exp_f(gelu_minus_2u(x))); }

// d gelu / dx with s = sigmoid(2u): 1 + tanh u = 2s and 1 - tanh^2 u = 4s(1 - s).
inline float gelu_grad_f(float x) {
  float s = 1.0f / (1.0f + exp_f(gelu_minus_2u(x)));
  return s + 2.0f * x * s * (1.0f - s) * kGeluC * (1.0f + 3.0f * kGeluA * x * x);
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

// Round-to-nearest-even to bfloat16, kept in f32 (as the reference's
// round_bf16): inf and NaN stay, a carry out of the mantissa rounds up to the
// next binade or to inf. Branch-free so that the loops calling it vectorise.
inline float round_bf16_f(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  uint32_t r = (b + 0x7fffu + ((b >> 16) & 1u)) & 0xffff0000u;
  r = (b & 0x7f800000u) == 0x7f800000u ? b : r;
  float y;
  std::memcpy(&y, &r, 4);
  return y;
}

}  // namespace sx::cpu
