#pragma once
// Branch-free float math that g++ vectorises inside plain loops (libm calls
// block vectorisation). exp_f is Cephes' expf: range reduction by ln 2 and a
// degree-5 polynomial, within 2 ulp of expf on its range; exactly 0 below
// -87.3 (so masked scores of -inf give exact zeros) and +inf above 88.0 (so
// that 2^n stays a normal float; callers exponentiate max-shifted values).
// Rounding uses the 1.5 * 2^23 trick, not floorf, so plain SSE2 vectorises it.
// The clamp is written as max and min (maxps / minps compute exactly these
// selects, a NaN giving lo) and the ends as one mask and one select: g++
// had turned the nested selects into 13 compares, masks and blends a
// vector, a fifth of gelu_f's instructions. The same values for every
// input (all 2^32 compared), save that a signalling NaN comes back quiet.
#include <cstdint>
#include <cstring>

namespace sx::cpu {

inline float exp_f(float x) {
  const float hi = 88.0f, lo = -87.3365447505531f;
  float xc = x > lo ? x : lo;
  xc = xc < hi ? xc : hi;
  float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, 4);
  float y = p * scale;
  y = x < lo ? 0.0f : y;
  return x <= hi ? y : x + __builtin_inff();  // above hi: inf; a NaN: itself
}

constexpr float kGeluC = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluA = 0.044715f;

// 0.5 x (1 + tanh(u)) written as x * sigmoid(2u): the same function, with no
// cancellation and no tanh call.
// -2u is (-2 kGeluC) (...) in one product: doubling is exact, so the two
// round alike but where u is subnormal, and there exp_f gives 1 either way.
inline float gelu_f(float x) {
  float minus_2u = (-2.0f * kGeluC) * (x + kGeluA * x * x * x);
  return x / (1.0f + exp_f(minus_2u));
}

// d gelu / dx with s = sigmoid(2u): 1 + tanh u = 2s and 1 - tanh^2 u = 4s(1 - s).
inline float gelu_grad_f(float x) {
  float minus_2u = (-2.0f * kGeluC) * (x + kGeluA * x * x * x);
  float s = 1.0f / (1.0f + exp_f(minus_2u));
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
