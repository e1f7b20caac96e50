// The CPU GEMM's tf32: each operand rounded to 10 mantissa bits, to nearest
// with ties away from zero (cvt.rna.tf32.f32; an RTX 3090's TF32 cuBLAS
// product gives 1024.5 x 1 = 1025, pytorch#53635: the tie went up, neither
// to even nor truncated), then an f32 product summed in k order. With
// `:precision tf32` the device's products are that, not f32's.
#include "backend/cuda/gemm_cpu.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "backend/cuda/cuda_device.h"
#include "graph/build.h"
#include "graph/params.h"

namespace sx::cuda {
namespace {

float bits(uint32_t b) {
  float x;
  std::memcpy(&x, &b, 4);
  return x;
}

TEST(Tf32, RoundsToNearestWithTiesAwayFromZero) {
  EXPECT_EQ(round_tf32(1024.5f), 1025.0f);                      // a tie: away from zero (even would be 1024)
  EXPECT_EQ(round_tf32(-1024.5f), -1025.0f);                    // and for negatives
  EXPECT_EQ(round_tf32(bits(0x3f801000u)), bits(0x3f802000u));  // 1 + 2^-11: the tie goes up
  EXPECT_EQ(round_tf32(bits(0x3f800fffu)), 1.0f);               // below the tie
  EXPECT_EQ(round_tf32(bits(0x3fffffffu)), 2.0f);               // the carry reaches the exponent
  EXPECT_EQ(round_tf32(INFINITY), INFINITY);
  EXPECT_TRUE(std::isnan(round_tf32(NAN)));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-8, 8);
  for (int i = 0; i < 1000; ++i) {
    float x = u(rng), r = round_tf32(x);
    uint32_t b;
    std::memcpy(&b, &r, 4);
    EXPECT_EQ(b & 0x1fffu, 0u) << x << " rounds to " << r << ", which is not a tf32 value";
    EXPECT_LE(std::fabs(r - x), std::ldexp(std::fabs(x), -11)) << x;  // at most half an ulp of 10 bits
  }
}

// out[i, j] = sum over l in order of tf32(x[i, l]) * tf32(w[l, j]), as plain loops.
std::vector<float> scalar_tf32_product(const std::vector<float>& x, const std::vector<float>& w, int64_t m, int64_t k,
                                       int64_t n) {
  std::vector<float> out(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t l = 0; l < k; ++l) acc += round_tf32(x[i * k + l]) * round_tf32(w[l * n + j]);
      out[i * n + j] = acc;
    }
  return out;
}

// x [m, k] @ w [k, n] on the cuda device over the emulated GPU at `precision`.
std::vector<float> device_product(Precision precision, const std::vector<float>& x, const std::vector<float>& w,
                                  int64_t m, int64_t k, int64_t n) {
  Graph g;
  NodeId y = ops::matmul(g, ops::input(g, "x", {m, k}, DType::F32), ops::input(g, "w", {k, n}, DType::F32));
  plan::Plan p = plan::make_plan(g, {y});
  auto d = make_cuda_device_on(make_emulated_gpu(int64_t{1} << 30), precision);
  d->allocate(params_of(g), nullptr);
  backend::GraphHandle h = d->load(g, p);
  d->run(h, {{"x", x.data()}, {"w", w.data()}}, 0);
  return d->read(h, y).f;
}

TEST(Tf32, PrecisionTf32ProductsAreTheScalarTf32ProductAndDifferFromF32) {
  const int64_t m = 7, k = 33, n = 5;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-2, 2);
  std::vector<float> x(m * k), w(k * n);
  for (float& v : x) v = u(rng);
  for (float& v : w) v = u(rng);
  std::vector<float> tf32 = device_product(Precision::tf32, x, w, m, k, n);
  std::vector<float> f32 = device_product(Precision::f32, x, w, m, k, n);
  std::vector<float> want = scalar_tf32_product(x, w, m, k, n);
  ASSERT_EQ(tf32.size(), want.size());
  EXPECT_EQ(std::memcmp(tf32.data(), want.data(), want.size() * 4), 0) << "tf32 is not the scalar tf32 product";
  int differ = 0;
  for (size_t i = 0; i < f32.size(); ++i) {
    differ += f32[i] != tf32[i];
    EXPECT_NEAR(tf32[i], f32[i], 2e-2) << i;  // 10 mantissa bits over 33 terms of |x w| <= 4
  }
  EXPECT_GT(differ, static_cast<int>(f32.size()) / 2) << "tf32 gives f32's products: nothing was rounded";
}

}  // namespace
}  // namespace sx::cuda
