// softmax_short (a row of at most 16 in one block of lanes) and softmax_row_f
// against the loop the kernels ran before (a chain of compares for the max):
// bit for bit, on rows of every length up to 16 and longer ones, with ties,
// zeros of both signs, -inf (masked keys), huge values and NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "backend/cpu/softmax_row.h"

namespace sx::cpu {
namespace {

// The softmax as the kernels ran it before max_lanes.
void softmax_loop(const float* x, float* y, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < n; ++j) m = x[j] > m ? x[j] : m;
  for (int64_t j = 0; j < n; ++j) y[j] = exp_f(x[j] - m);
  float sum = sum_lanes(y, n);
  for (int64_t j = 0; j < n; ++j) y[j] = y[j] / sum;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }

TEST(SoftmaxShort, SameBitsAsTheLoopOnEveryLength) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float specials[] = {0.0f, -0.0f, -inf, inf, nan, 1e30f, -1e30f, 88.5f, -90.0f, 3.0f};
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  int checked = 0;
  for (int64_t n = 1; n <= kLanes; ++n)
    for (int trial = 0; trial < 400; ++trial) {
      std::vector<float> x(n), want(n), got(n);
      for (float& v : x) v = rng() % 5 == 0 ? specials[rng() % 10] : normal(rng);
      if (trial % 7 == 0) x.assign(n, 2.5f);   // ties
      if (trial % 11 == 0) x.assign(n, -inf);  // every key masked
      if (trial % 13 == 0)                     // the max a zero, of either sign, maybe several
        for (float& v : x) v = rng() % 3 == 0 ? 0.0f : rng() % 2 ? -0.0f : -1.0f - static_cast<float>(rng() % 3);
      softmax_loop(x.data(), want.data(), n);
      softmax_short(x.data(), got.data(), n);
      for (int64_t j = 0; j < n; ++j) {
        ASSERT_TRUE(same_bits(want[j], got[j]) || (std::isnan(want[j]) && std::isnan(got[j])))
            << "n " << n << " trial " << trial << " j " << j << ": " << want[j] << " vs " << got[j];
        ++checked;
      }
      softmax_short(x.data(), x.data(), n);  // in place
      for (int64_t j = 0; j < n; ++j) ASSERT_TRUE(same_bits(x[j], got[j]) || std::isnan(got[j]));
    }
  EXPECT_EQ(checked, 400 * kLanes * (kLanes + 1) / 2);
}

TEST(SoftmaxShort, LongRowsSameBitsAsTheLoop) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float specials[] = {0.0f, -0.0f, -inf, inf, nan, 1e30f, -1e30f, 88.5f, -90.0f, 3.0f};
  std::mt19937 rng(12);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  for (int64_t n : {17, 31, 32, 33, 64, 100, 128, 513})
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<float> x(n), want(n), got(n);
      for (float& v : x) v = rng() % 9 == 0 ? specials[rng() % 10] : normal(rng);
      if (trial % 3 == 0)  // no NaN or inf: most rows of a real model
        for (float& v : x) v = std::isfinite(v) ? v : 1.0f;
      if (trial % 13 == 0)  // the max a zero, of either sign, maybe several
        for (float& v : x) v = rng() % 3 == 0 ? 0.0f : rng() % 2 ? -0.0f : -1.0f - static_cast<float>(rng() % 3);
      softmax_loop(x.data(), want.data(), n);
      softmax_row_f(x.data(), got.data(), n);
      for (int64_t j = 0; j < n; ++j)
        ASSERT_TRUE(same_bits(want[j], got[j]) || (std::isnan(want[j]) && std::isnan(got[j])))
            << "n " << n << " trial " << trial << " j " << j << ": " << want[j] << " vs " << got[j];
    }
}

// The rows a block of softmax_rows_f takes: fewer for long rows.
TEST(SoftmaxShort, BlocksOfRowsStayInCache) {
  EXPECT_EQ(softmax_block_rows(128), kSoftmaxBlock);  // attention's keys
  EXPECT_EQ(softmax_block_rows(4096), 4);
  EXPECT_EQ(softmax_block_rows(50000), 1);  // a vocabulary's rows, one at a time
  EXPECT_EQ(softmax_block_rows(0), kSoftmaxBlock);
}

// softmax_rows_f (a step at a time over blocks of rows) against the loop row
// by row: rows of every length to 40 and longer, short and long mixed in a
// block, zero-length rows, in place and into another buffer, with the sums.
TEST(SoftmaxShort, RowsAStepAtATimeSameBitsAsTheLoop) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float specials[] = {0.0f, -0.0f, -inf, inf, nan, 1e30f, -1e30f, 88.5f, -90.0f, 3.0f};
  std::mt19937 rng(13);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t ld = trial % 5 == 0 ? 5000 : 136;             // blocks of 3 rows, of 16
    const int64_t rows = 1 + static_cast<int64_t>(rng() % 40);  // blocks of kSoftmaxBlock and a part
    std::vector<int64_t> len(rows);
    std::vector<float> x(rows * ld), want(rows * ld, 7.0f), got(rows * ld, 7.0f), sums(rows);
    for (int64_t i = 0; i < rows; ++i) len[i] = rng() % 4 == 0 ? rng() % (ld + 1) : rng() % 41;
    for (float& v : x) v = rng() % 9 == 0 ? specials[rng() % 10] : normal(rng);
    if (trial % 3 == 0)
      for (float& v : x) v = std::isfinite(v) ? v : 1.0f;
    for (int64_t i = 0; i < rows; ++i) softmax_loop(x.data() + i * ld, want.data() + i * ld, len[i]);
    bool in_place = trial % 2 == 0;
    if (in_place) got = x;
    softmax_rows_f(
        in_place ? got.data() : x.data(), got.data(), ld, rows, [&len](int64_t i) { return len[i]; }, sums.data());
    for (int64_t i = 0; i < rows; ++i) {
      if (len[i] == 0) {
        EXPECT_TRUE(same_bits(sums[i], 0.0f)) << "row " << i;
      }
      if (!in_place) {  // past its length a row is left as it was
        for (int64_t j = len[i]; j < ld; ++j) ASSERT_EQ(got[i * ld + j], 7.0f) << "row " << i << " j " << j;
      }
      std::vector<float> y(len[i]);
      float sum = softmax_row_f(x.data() + i * ld, y.data(), len[i]);
      EXPECT_TRUE(same_bits(sum, sums[i]) || (std::isnan(sum) && std::isnan(sums[i]))) << "row " << i;
      for (int64_t j = 0; j < len[i]; ++j) {
        float w = want[i * ld + j], g = got[i * ld + j];
        ASSERT_TRUE(same_bits(w, g) || (std::isnan(w) && std::isnan(g)))
            << "trial " << trial << " row " << i << " of " << len[i] << " j " << j << ": " << w << " vs " << g;
      }
    }
  }
}

// max_lanes against the loop's chain: the same value, of the same bits but
// for the sign of a zero, NaNs skipped, on every length to 40.
TEST(SoftmaxShort, TreeMaxIsTheLoopsMax) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float pool[] = {0.0f, -0.0f, -inf, inf, nan, 1.0f, -1.0f, 2.0f};
  std::mt19937 rng(5);
  int zero_signs_differ = 0;
  for (int trial = 0; trial < 40000; ++trial) {
    int64_t n = trial % 41;
    float v[41];
    for (float& x : v) x = pool[rng() % 8];
    float want = -inf;
    for (int64_t j = 0; j < n; ++j) want = v[j] > want ? v[j] : want;
    float got = max_lanes(v, n);
    if (want == 0.0f && got == 0.0f) {
      zero_signs_differ += std::signbit(want) != std::signbit(got);
      continue;
    }
    ASSERT_TRUE(same_bits(want, got)) << "trial " << trial << ": " << want << " vs " << got;
  }
  EXPECT_GT(zero_signs_differ, 0);                    // the case the softmax test above covers: it happens
  EXPECT_TRUE(same_bits(exp_f(0.0f), exp_f(-0.0f)));  // why it changes nothing
}

// sum_exp_lanes against the form it replaced (sum_lanes of the lambda
// exp_f(v - m)): the same bits on every length to 80 (whole blocks and
// tails), with -inf (terms of +0), huge values (+inf terms), NaN and the
// row's own max or another shift.
TEST(SoftmaxShort, SumExpLanesIsTheLambdaSum) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float specials[] = {0.0f, -0.0f, -inf, inf, nan, 1e30f, -1e30f, 88.5f, -90.0f, 1e-40f};
  std::mt19937 rng(17);
  std::normal_distribution<float> normal(0.0f, 6.0f);
  int checked = 0;
  for (int64_t n = 0; n <= 80; ++n)
    for (int trial = 0; trial < 60; ++trial) {
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) v = rng() % 6 == 0 ? specials[rng() % 10] : normal(rng);
      float m = trial % 2 ? max_lanes(x.data(), n) : normal(rng);
      float want = sum_lanes(x.data(), n, [m](float v) { return exp_f(v - m); });
      float got = sum_exp_lanes(x.data(), n, m);
      ASSERT_TRUE(want != want ? got != got : same_bits(want, got))
          << "n " << n << " trial " << trial << ": " << want << " vs " << got;
      ++checked;
    }
  EXPECT_EQ(checked, 81 * 60);
}

}  // namespace
}  // namespace sx::cpu
