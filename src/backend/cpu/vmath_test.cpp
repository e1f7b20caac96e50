// vmath.h's exp_f, gelu_f and gelu_grad_f: their ends (0, inf, NaN), their
// error against double precision, and exp_f bit for bit against the form
// the kernels ran before its clamp was dropped and its selects rewritten
// (a sweep of bit patterns; all 2^32 were compared once, by hand).
#include "backend/cpu/vmath.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace sx::cpu {
namespace {

float from_bits(uint32_t b) { return std::bit_cast<float>(b); }
uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }

// exp_f as it was written before: nested selects for the clamp and the ends.
float exp_nested_selects(float x) {
  const float hi = 88.0f, lo = -87.3365447505531f;
  float xc = x > hi ? hi : (x < lo ? lo : x);
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
  float y = p * from_bits(static_cast<uint32_t>(bits));
  y = x < lo ? 0.0f : y;
  y = x > hi ? std::numeric_limits<float>::infinity() : y;
  return x != x ? x : y;
}

// Distance in units in the last place between two finite floats of one sign.
int64_t ulps(float a, double want) {
  return std::llabs(static_cast<int64_t>(bits_of(a)) - static_cast<int64_t>(bits_of(static_cast<float>(want))));
}

TEST(Vmath, ExpEndsAreZeroInfAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(bits_of(exp_f(-inf)), 0u);
  EXPECT_EQ(bits_of(exp_f(-87.5f)), 0u);
  EXPECT_EQ(bits_of(exp_f(-1e30f)), 0u);
  EXPECT_EQ(exp_f(88.01f), inf);
  EXPECT_EQ(exp_f(1e30f), inf);
  EXPECT_EQ(exp_f(inf), inf);
  EXPECT_TRUE(std::isfinite(exp_f(88.0f)));
  EXPECT_GT(exp_f(-87.33f), 0.0f);
  EXPECT_EQ(exp_f(0.0f), 1.0f);
  EXPECT_EQ(exp_f(-0.0f), 1.0f);
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(bits_of(exp_f(nan)), bits_of(nan));  // a quiet NaN comes back itself
  EXPECT_TRUE(std::isnan(exp_f(from_bits(0xff800001u))));
}

TEST(Vmath, ExpIsTheNestedSelectFormBitForBit) {
  int64_t compared = 0;
  // Every 61st pattern (prime, so every exponent and sign meets many mantissas).
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 61) {
    float x = from_bits(static_cast<uint32_t>(b));
    float got = exp_f(x), want = exp_nested_selects(x);
    if (x != x) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << b;
      continue;
    }
    ASSERT_EQ(bits_of(got), bits_of(want)) << "x bits 0x" << std::hex << b;
    ++compared;
  }
  EXPECT_GT(compared, 60'000'000);
}

TEST(Vmath, ExpWithinTwoUlpOfDouble) {
  int64_t worst = 0;
  for (float x = -87.0f; x < 88.0f; x += 0.0137f) worst = std::max(worst, ulps(exp_f(x), std::exp(double{x})));
  EXPECT_LE(worst, 2);
}

TEST(Vmath, GeluAndItsGradientAgainstDouble) {
  auto gelu = [](double x) {
    double u = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1.0 + std::tanh(u));
  };
  for (float x = -9.0f; x < 9.0f; x += 0.0071f) {
    double want = gelu(x);
    EXPECT_NEAR(gelu_f(x), want, 4e-7 * std::max(1.0, std::fabs(want))) << x;
    double h = 1e-5, slope = (gelu(x + h) - gelu(x - h)) / (2 * h);
    EXPECT_NEAR(gelu_grad_f(x), slope, 2e-6 * std::max(1.0, std::fabs(slope))) << x;
  }
  EXPECT_EQ(gelu_f(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(gelu_f(std::numeric_limits<float>::quiet_NaN())));
}

// vmath.h's _k forms on GCC vectors, four side by side (what a product's
// fused gelu and gelu' run: gemm_driver.inc's gelu_tile), give every lane
// the float function's bits: a sweep of bit patterns and the ends, on
// vectors of 8 lanes (AVX2's) and of 16 (AVX-512's; lowered here to what
// the build targets).
template <int W>
void expect_lanes_give_the_float_bits() {
  using F = typename Lanes<W>::F;
  using U = typename Lanes<W>::U;
  static_assert(sizeof(F) == W * sizeof(float));
  constexpr int K = 4, N = K * W;
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> xs = {0.0f,    -0.0f,  inf,     -inf,    std::numeric_limits<float>::quiet_NaN(),
                           88.0f,   88.01f, -87.33f, -87.34f, 1e-40f,
                           -1e-40f, 30.0f,  -30.0f,  3.5f,    -3.5f};
  // Every 997th pattern (prime, so every exponent and sign meets many mantissas).
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 997) xs.push_back(from_bits(static_cast<uint32_t>(b)));
  while (xs.size() % N) xs.push_back(1.0f);
  auto same = [](float got, float want) { return want != want ? got != got : bits_of(got) == bits_of(want); };
  int64_t checked = 0;
  for (size_t at = 0; at < xs.size(); at += N) {
    F x[K], e[K], g[K], d[K];
    std::memcpy(x, xs.data() + at, sizeof x);
    exp_k<K, F, U>(x, e);
    gelu_k<K, F, U>(x, g);
    gelu_grad_k<K, F, U>(x, d);
    for (int l = 0; l < N; ++l) {
      float v = xs[at + l];
      ASSERT_TRUE(same(e[l / W][l % W], exp_f(v))) << "exp, x bits 0x" << std::hex << bits_of(v);
      ASSERT_TRUE(same(g[l / W][l % W], gelu_f(v))) << "gelu, x bits 0x" << std::hex << bits_of(v);
      ASSERT_TRUE(same(d[l / W][l % W], gelu_grad_f(v))) << "gelu', x bits 0x" << std::hex << bits_of(v);
      ++checked;
    }
  }
  EXPECT_GT(checked, 4'000'000);
}

TEST(Vmath, VectorFormsGiveTheFloatBits) {
  expect_lanes_give_the_float_bits<8>();
  expect_lanes_give_the_float_bits<16>();
}

}  // namespace
}  // namespace sx::cpu
