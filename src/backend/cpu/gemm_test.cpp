// gemm.h: every element is the fused multiply-add chain over k in order, bit
// for bit, on every instruction set, serially and over 1, 2 and 3 threads,
// for edge sizes around the register tile and the k block; and, as an
// independent check of the whole, close to OpenBLAS's sgemm.
#include "backend/cpu/gemm.h"

#include <cblas.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/gemm_test_util.h"
#include "backend/cpu/isa.h"
#include "backend/cpu/vmath.h"

namespace sx::cpu {
namespace {

struct Operands {
  int64_t m, n, k;
  bool ta, tb;
  int64_t pad;  // extra floats at the end of each stored row
  float alpha;
  std::vector<float> a, b;
  int64_t lda, ldb;
  std::vector<float> bias;  // empty: none; else n floats added after alpha

  Operands(int64_t m_, int64_t n_, int64_t k_, bool ta_, bool tb_, int64_t pad_ = 0, float alpha_ = 1.0f,
           uint32_t seed = 1)
      : m(m_), n(n_), k(k_), ta(ta_), tb(tb_), pad(pad_), alpha(alpha_) {
    lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    a.resize(static_cast<size_t>((ta ? k : m) * lda));
    b.resize(static_cast<size_t>((tb ? n : k) * ldb));
    for (float& x : a) x = u(rng);
    for (float& x : b) x = u(rng);
  }
  float at_a(int64_t i, int64_t p) const { return ta ? a[p * lda + i] : a[i * lda + p]; }
  float at_b(int64_t p, int64_t j) const { return tb ? b[j * ldb + p] : b[p * ldb + j]; }

  Gemm call(std::vector<float>& c) const {
    c.assign(static_cast<size_t>(m * (n + pad)), -7.0f);  // stale values must not leak in
    return {.m = m,
            .n = n,
            .k = k,
            .a = a.data(),
            .lda = lda,
            .ta = ta,
            .b = b.data(),
            .ldb = ldb,
            .tb = tb,
            .c = c.data(),
            .ldc = n + pad,
            .alpha = alpha,
            .bias = bias.empty() ? nullptr : bias.data()};
  }
  // The definition: one fused multiply-add chain per element, from +0.
  std::vector<float> chain() const {
    std::vector<float> c(static_cast<size_t>(m * (n + pad)), -7.0f);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float s = 0.0f;
        for (int64_t p = 0; p < k; ++p) s = std::fma(at_a(i, p), at_b(p, j), s);
        s = alpha != 1.0f ? s * alpha : s;
        c[i * (n + pad) + j] = bias.empty() ? s : s + bias[j];
      }
    return c;
  }
};

using testing::run_gemm;
using testing::same_bits;

std::vector<float> serial(const Operands& o) {
  std::vector<float> c;
  run_gemm(o.call(c), 0);
  return c;
}

std::vector<float> parallel(const Operands& o, int threads) {
  std::vector<float> c;
  run_gemm(o.call(c), threads);
  return c;
}

// The products the fused-step tests run: around the register tiles and the
// k block, big enough to run over the pool, and one of few rows whose
// threads split its columns.
struct Dims {
  int64_t m, n, k;
};

// Restores the instruction set the other tests expect.
struct IsaGuard {
  Isa saved = isa();
  ~IsaGuard() { set_isa(saved); }
};

std::vector<Isa> supported() {
  std::vector<Isa> out;
  for (Isa i : {Isa::Baseline, Isa::Avx2, Isa::Avx512})
    if (static_cast<int>(i) <= static_cast<int>(best_isa())) out.push_back(i);
  return out;
}

// A linear's bias added in the product's last k block (the executor's
// matmul + add): the chain, times alpha, plus the bias, as the add after it
// would give, on every instruction set, serially and over the pool; and for
// a bf16 product, its own chain plus the bias.
TEST(Gemm, BiasIsAddedAfterTheChainOnEveryIsaAndThreadCount) {
  IsaGuard guard;
  struct Shape {
    int64_t m, n, k;
  };
  std::vector<Shape> shapes = {{1, 1, 1}, {13, 33, 17}, {15, 31, 257}, {145, 47, 513}, {200, 130, 600}, {16, 8, 16}};
  const float specials[] = {-0.0f, 0.0f, 1e-40f, -3.5f, 1e30f};
  for (Isa i : supported()) {
    set_isa(i);
    for (const Shape& s : shapes)
      for (int t = 0; t < 4; ++t) {
        Operands o(s.m, s.n, s.k, t & 1, t & 2, t == 3 ? 3 : 0, t == 2 ? 0.125f : 1.0f, static_cast<uint32_t>(s.n + t));
        std::mt19937 rng(static_cast<uint32_t>(s.k));
        for (int64_t j = 0; j < s.n; ++j) o.bias.push_back(j % 3 ? specials[rng() % 5] : 0.01f * static_cast<float>(j));
        auto want = o.chain();
        std::string where = std::string(isa_name(i)) + " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                            std::to_string(s.k) + " t=" + std::to_string(t);
        EXPECT_TRUE(same_bits(serial(o), want)) << where << " serial";
        for (int threads : {1, 2, 3}) EXPECT_TRUE(same_bits(parallel(o, threads), want)) << where << " on " << threads;
      }
  }
  for (bool units : {false, true}) {  // bf16: the product without the bias, then the add
    bool was = gemm_bf16_units();
    set_gemm_bf16_units(units);
    Operands o(145, 47, 513, false, true, 0, 0.125f, 5);
    std::vector<float> plain, with, scratch(static_cast<size_t>(gemm_thread_floats(o.n)));
    Gemm g = o.call(plain);
    g.bf16 = true;
    gemm(g, scratch.data());
    // Among the bias, values whose sums round_bf16_f keeps (inf, a NaN whose
    // payload is in its low half) or rounds up to inf (FLT_MAX).
    const float nan_low = std::bit_cast<float>(0x7fc00001u), inf = std::numeric_limits<float>::infinity();
    const float specials[] = {nan_low, inf, -inf, std::numeric_limits<float>::max()};
    for (int64_t j = 0; j < o.n; ++j)
      o.bias.push_back(j % 9 == 4 ? specials[j / 9 % 4] : j % 2 ? -0.0f : 0.5f * static_cast<float>(j));
    Gemm h = o.call(with);
    h.bf16 = true;
    gemm(h, scratch.data());
    for (int64_t r = 0; r < o.m; ++r)
      for (int64_t j = 0; j < o.n; ++j) plain[r * o.n + j] = plain[r * o.n + j] + o.bias[j];
    EXPECT_TRUE(same_bits(plain, with)) << "bf16, units " << units;
    // round_output: the output of the bias add rounded, serially and over the pool.
    for (float& v : plain) v = round_bf16_f(v);
    for (int threads : {0, 1, 3}) {
      std::vector<float> rounded;
      Gemm r = o.call(rounded);
      r.bf16 = true, r.round_output = true;
      run_gemm(r, threads);
      EXPECT_TRUE(same_bits(plain, rounded)) << "bf16 rounded, units " << units << ", threads " << threads;
    }
    set_gemm_bf16_units(was);
  }
}

// An elementwise step fused into the tiles (Gemm::then): what the step's own
// function gives from the final C (after alpha and the bias), written apart,
// over C itself or over x, on every instruction set, serially and over the
// pool, tiles at every edge. And after a bf16 product's round_output (on
// the f32 units and, where the CPU has them, the bf16 units): the step's
// function of the rounded C, C itself rounded.
TEST(Gemm, ThenStepGivesTheOpsBitsOnEveryIsaAndThreadCount) {
  IsaGuard guard;
  bool units_were = gemm_bf16_units();
  std::vector<Dims> shapes = {{13, 33, 17},    {15, 31, 257},   {145, 47, 513},
                              {200, 130, 600}, {130, 400, 300}, {64, 64, 33}};
  for (Isa i : supported())
    for (int kind = 0; kind < 3; ++kind) {  // f32; bf16 on the f32 units; on the bf16 units
      set_isa(i);
      set_gemm_bf16_units(false);
      if (kind == 2 && !set_gemm_bf16_units(true)) continue;
      for (const Dims& s : shapes)
        for (Gemm::Then then : {Gemm::Then::Gelu, Gemm::Then::GeluGradMul, Gemm::Then::AddAfter, Gemm::Then::AddBefore})
          for (int where = 0; where < 3; ++where) {  // out apart, over C, over x
            if (then == Gemm::Then::Gelu && where == 2) continue;
            Operands o(s.m, s.n, s.k, false, s.k % 2 == 1, 0, s.m % 2 ? 0.5f : 1.0f, static_cast<uint32_t>(s.m));
            for (int64_t j = 0; j < s.n; ++j) o.bias.push_back(0.125f * static_cast<float>(j % 5) - 0.25f);
            std::vector<float> x(static_cast<size_t>(s.m * s.n));
            std::mt19937 rng(3);
            for (float& v : x) v = std::uniform_real_distribution<float>(-4.0f, 4.0f)(rng);
            std::vector<float> c_want = o.chain(), out_want(x.size());
            if (kind > 0) {  // the bf16 product with its bias, rounded (BiasIsAdded... checks that)
              Gemm r = o.call(c_want);
              r.bf16 = true, r.round_output = true;
              run_gemm(r, 0);
            }
            for (size_t e = 0; e < x.size(); ++e)
              out_want[e] = then == Gemm::Then::Gelu          ? gelu_f(c_want[e])
                            : then == Gemm::Then::GeluGradMul ? gelu_grad_f(x[e]) * c_want[e]
                            : then == Gemm::Then::AddAfter    ? c_want[e] + x[e]
                                                              : x[e] + c_want[e];
            std::string what = std::string(isa_name(i)) + " kind " + std::to_string(kind) + " " + std::to_string(s.m) +
                               "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " then " +
                               std::to_string(static_cast<int>(then)) + " at " + std::to_string(where);
            for (int threads : {0, 1, 3}) {  // 0: serial
              std::vector<float> c, xs = x, out(x.size(), -9.0f);
              Gemm g = o.call(c);
              g.bf16 = g.round_output = kind > 0;
              g.then = then, g.then_x = xs.data(), g.ldo = s.n;
              g.then_out = where == 0 ? out.data() : where == 1 ? c.data() : xs.data();
              run_gemm(g, threads);
              const std::vector<float>& got = where == 0 ? out : where == 1 ? c : xs;
              EXPECT_TRUE(same_bits(got, out_want)) << what << " on " << threads;
              if (where != 1) {
                EXPECT_TRUE(same_bits(c, c_want)) << what << ": C changed";
              }
            }
          }
    }
  set_gemm_bf16_units(units_were);
}

// Gemm::colsum: op(B)'s column sums made while it is packed, +0 then each
// row added in order (what k_shape's sum-to adds), whatever the blocking,
// instruction set and thread count; the product itself unchanged. A bf16
// product sums B's values as given, on the f32 units and the bf16 units, or
// each rounded to bf16 (colsum_rounded; a denormal's round kept).
TEST(Gemm, ColumnSumsAreTheRowOrderSums) {
  IsaGuard guard;
  bool units_were = gemm_bf16_units();
  std::vector<Dims> shapes = {{13, 33, 17}, {15, 31, 257}, {145, 47, 513}, {64, 130, 2048}, {130, 400, 300}};
  for (Isa i : supported())
    for (int kind = 0; kind < 5; ++kind) {  // f32, bf16 on the f32 units, on the bf16 units; 3, 4: 1, 2 rounded
      set_isa(i);
      if (kind % 2 == 0 && kind > 0 && !set_gemm_bf16_units(true)) continue;
      if (kind % 2 == 1 || kind == 0) set_gemm_bf16_units(false);
      const bool rounded = kind > 2;
      for (const Dims& s : shapes) {
        Operands o(s.m, s.n, s.k, true, false, 0, 1.0f, static_cast<uint32_t>(s.k));
        o.b[0] = -0.0f;             // a column whose first value is -0: +0 + -0 is +0
        o.b[1] = 1e-40f;            // a denormal: summed as it is, though the bf16 product reads it as 0
        o.b[2] = 0x1.fffffep-127f;  // rounds up to 2^-126
        std::vector<float> want(static_cast<size_t>(s.n), 0.0f), plain;
        for (int64_t p = 0; p < s.k; ++p)
          for (int64_t j = 0; j < s.n; ++j) want[j] += rounded ? round_bf16_f(o.at_b(p, j)) : o.at_b(p, j);
        Gemm bare = o.call(plain);
        bare.bf16 = kind > 0;
        run_gemm(bare, 0);
        for (int threads : {0, 1, 3}) {
          std::vector<float> c, sums(static_cast<size_t>(s.n), -5.0f);
          Gemm g = o.call(c);
          g.bf16 = kind > 0;
          g.colsum = sums.data(), g.colsum_rounded = rounded;
          run_gemm(g, threads);
          std::string what = std::string(isa_name(i)) + " kind " + std::to_string(kind) + " " + std::to_string(s.m) +
                             "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " on " + std::to_string(threads);
          EXPECT_TRUE(same_bits(sums, want)) << what;
          EXPECT_TRUE(same_bits(c, plain)) << what << ": the product changed";
        }
      }
    }
  set_gemm_bf16_units(units_were);
}

// Gemm::k_from / k_to / n_to (attention's backward): the terms a row's range
// leaves out are zeros in A, so the chain over the rest is the full chain's
// bits; the columns a row does not want are the chain or untouched, and a
// product no row wants leaves C as it was. Both layouts of op(A), every
// instruction set, serially and over the pool; n = 30 reads a transposed A
// in place (a_in_place), as attention's dV and dK do. Each case leaves some
// tile out (checked: else the ranges would not be tested).
TEST(Gemm, RangedRowsGiveTheChainsBits) {
  IsaGuard guard;
  for (Isa i : supported()) {
    set_isa(i);
    for (bool ta : {false, true})
      for (Dims s : std::vector<Dims>{{45, 70, 96}, {13, 33, 17}, {40, 30, 80}}) {
        Operands o(s.m, s.n, s.k, ta, !ta, 0, ta ? 0.5f : 1.0f, static_cast<uint32_t>(s.m));
        std::mt19937 rng(5);
        std::vector<int32_t> from(static_cast<size_t>(s.m)), to(from.size()), cols(from.size());
        for (int64_t r = 0; r < s.m; ++r) {
          from[r] = static_cast<int32_t>(rng() % (s.k + 1));
          to[r] = static_cast<int32_t>(from[r] + rng() % (s.k + 1 - from[r]));
          cols[r] = static_cast<int32_t>(rng() % ((s.n <= 32 && r < 16 ? 16 : s.n) + 1));  // a first tile of one panel
          // n <= 32 is one panel of AVX-512's 32 columns: rows [14, 28) want
          // none, a whole tile left out for every register tile (4, 6, 14 rows).
          if (s.n <= 32 && r >= 14 && r < 28) cols[r] = 0;
          for (int64_t p = 0; p < s.k; ++p)
            if (p < from[r] || p >= to[r]) (ta ? o.a[p * o.lda + r] : o.a[r * o.lda + p]) = (p % 2 ? -0.0f : 0.0f);
        }
        std::vector<float> want = o.chain();
        std::string what = std::string(isa_name(i)) + " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                           std::to_string(s.k) + " ta=" + std::to_string(ta);
        int64_t untouched = 0;
        for (int threads : {0, 1, 3}) {
          std::vector<float> c;
          Gemm g = o.call(c);
          g.k_from = from.data(), g.k_to = to.data(), g.n_to = cols.data();
          run_gemm(g, threads);
          for (int64_t r = 0; r < s.m; ++r)
            for (int64_t j = 0; j < s.n; ++j) {
              float got = c[r * s.n + j], w = want[r * s.n + j];
              bool chain = std::memcmp(&got, &w, 4) == 0;
              untouched += !chain;
              EXPECT_TRUE(chain || (j >= cols[r] && got == -7.0f))
                  << what << " at " << r << "," << j << " on " << threads;
            }
          std::vector<int32_t> none(from.size(), 0);
          std::fill(c.begin(), c.end(), -7.0f);
          g.n_to = none.data();
          run_gemm(g, threads);
          EXPECT_TRUE(std::all_of(c.begin(), c.end(), [](float x) { return x == -7.0f; })) << what << ": C was written";
        }
        EXPECT_GT(untouched, 0) << what << ": no tile was left out";
      }
  }
}

TEST(Gemm, EveryElementIsTheFmaChainOnEveryIsaAndThreadCount) {
  IsaGuard guard;
  struct Shape {
    int64_t m, n, k;
  };
  // Around the register tiles (4/6/14 rows x 16/16/32 columns), attention's
  // small per-head products, the row blocks (96/140) and the k block (256);
  // big enough to run over the pool. 30 x 140 x 1024 and 20 x 530 x 40: an
  // f32 op(A) packed on AVX-512 (a_in_place: lda 4 KiB; more than 16 panels).
  // 64 x 64 x 32 and 22 x 32 x 600: 8 rows past the last 14-row tile, the
  // 8-row edge kernel's, whole panels (into C where it lies) over one k
  // block and several.
  std::vector<Shape> shapes = {{1, 1, 1},       {3, 5, 7},      {13, 33, 17},    {14, 32, 256}, {15, 31, 257},
                               {97, 65, 300},   {145, 47, 513}, {200, 130, 600}, {64, 1, 40},   {1, 70, 90},
                               {29, 16, 33},    {30, 9, 8},     {16, 17, 300},   {13, 8, 1000}, {141, 15, 260},
                               {16, 16, 8},     {16, 8, 16},    {9, 13, 256},    {2, 16, 5},    {16, 3, 257},
                               {30, 140, 1024}, {20, 530, 40},  {64, 64, 32},    {22, 32, 600}};
  for (Isa i : supported()) {
    set_isa(i);
    for (const Shape& s : shapes)
      for (int t = 0; t < 4; ++t) {
        Operands o(s.m, s.n, s.k, t & 1, t & 2, t == 3 ? 3 : 0, t == 2 ? 0.125f : 1.0f, static_cast<uint32_t>(s.m + t));
        auto want = o.chain();
        std::string what = std::string(isa_name(i)) + " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                           std::to_string(s.k) + " ta=" + std::to_string(o.ta) + " tb=" + std::to_string(o.tb);
        EXPECT_TRUE(same_bits(serial(o), want)) << what << ", one thread";
        for (int threads : {1, 2, 3}) EXPECT_TRUE(same_bits(parallel(o, threads), want)) << what << ", " << threads;
      }
  }
}

// An f32 A [m, k] is read where it lies (gemm_driver.inc's a_in_place), and
// so is a transposed A [k, m] where op(B) has at most two panels: NaNs in
// its rows' padding change no bit, and nothing past its last element is read
// (the copy ends there: ASan's run would see a read past it), with m not a
// multiple of any kernel's rows and k across k blocks.
TEST(Gemm, AReadInPlaceReadsOnlyItsElements) {
  IsaGuard guard;
  for (Isa i : supported()) {
    set_isa(i);
    for (bool ta : {false, true})
      for (Dims d : std::vector<Dims>{{13, 40, 9}, {29, 70, 300}, {203, 33, 700}, {1, 16, 5}, {50, 32, 400}}) {
        const int64_t pad = 5;
        Operands o(d.m, d.n, d.k, ta, false, pad, 1.0f, static_cast<uint32_t>(d.k));
        for (int64_t r = 0; r < (ta ? d.k : d.m); ++r)
          std::fill_n(o.a.begin() + r * o.lda + (ta ? d.m : d.k), pad, std::numeric_limits<float>::quiet_NaN());
        std::vector<float> tight(o.a.begin(), o.a.end() - pad), c;
        Gemm g = o.call(c);
        g.a = tight.data();
        auto want = o.chain();
        std::string what = std::string(isa_name(i)) + (ta ? " ta " : " ") + std::to_string(d.m) + "x" +
                           std::to_string(d.n) + "x" + std::to_string(d.k);
        for (int threads : {0, 1, 2}) {
          run_gemm(g, threads);
          EXPECT_TRUE(same_bits(c, want)) << what << ", " << threads << " threads";
          std::fill(c.begin(), c.end(), -7.0f);
        }
      }
  }
}

TEST(Gemm, CloseToOpenBlas) {
  for (int t = 0; t < 4; ++t) {
    Operands o(300, 170, 700, t & 1, t & 2, 0, 0.5f, 9);
    std::vector<float> want(static_cast<size_t>(o.m * o.n));
    cblas_sgemm(CblasRowMajor, o.ta ? CblasTrans : CblasNoTrans, o.tb ? CblasTrans : CblasNoTrans,
                static_cast<int>(o.m), static_cast<int>(o.n), static_cast<int>(o.k), o.alpha, o.a.data(),
                static_cast<int>(o.lda), o.b.data(), static_cast<int>(o.ldb), 0.0f, want.data(), static_cast<int>(o.n));
    auto got = parallel(o, 2);
    double worst = 0;
    for (size_t e = 0; e < want.size(); ++e) worst = std::max(worst, std::fabs(double{got[e]} - double{want[e]}));
    // Sums of 700 products of values in [-1, 1]: about 8 in size.
    EXPECT_LT(worst, 1e-4) << "ta=" << o.ta << " tb=" << o.tb;
  }
}

TEST(Gemm, EmptySumIsZeroAndEmptyOutputIsUntouched) {
  Operands o(5, 6, 0, false, false);
  EXPECT_TRUE(same_bits(serial(o), std::vector<float>(30, 0.0f)));
  EXPECT_TRUE(same_bits(parallel(o, 2), std::vector<float>(30, 0.0f)));
  Operands none(0, 6, 4, false, false);
  EXPECT_TRUE(serial(none).empty());
}

TEST(Gemm, NonFiniteValuesPropagate) {
  Operands o(20, 40, 30, false, false);
  o.a[3 * o.lda + 5] = std::numeric_limits<float>::infinity();
  o.b[7 * o.ldb + 9] = std::numeric_limits<float>::quiet_NaN();
  auto got = serial(o);
  EXPECT_TRUE(std::isnan(got[3 * o.n + 9]));  // inf * finite + NaN
  EXPECT_TRUE(std::isinf(got[3 * o.n + 0]));  // row 3 sees the inf
  EXPECT_TRUE(std::isnan(got[0 * o.n + 9]));  // column 9 sees the NaN
  EXPECT_TRUE(std::isfinite(got[1 * o.n + 1]));
  EXPECT_TRUE(same_bits(got, o.chain()));
}

}  // namespace
}  // namespace sx::cpu

namespace sx::cpu::testing {
namespace {

// The benchmarks' instruction-set knobs read names with find_isa: each
// isa_name back to its set, anything else refused.
TEST(Isa, FindIsaInvertsIsaName) {
  for (Isa i : {Isa::Baseline, Isa::Avx2, Isa::Avx512}) {
    Isa got = i == Isa::Baseline ? Isa::Avx512 : Isa::Baseline;
    EXPECT_TRUE(find_isa(isa_name(i), &got)) << isa_name(i);
    EXPECT_EQ(got, i);
  }
  Isa untouched = Isa::Avx2;
  for (const char* bad : {"", "AVX2", "avx", "avx512f", "sse2"}) EXPECT_FALSE(find_isa(bad, &untouched)) << bad;
  EXPECT_EQ(untouched, Isa::Avx2);
}

}  // namespace
}  // namespace sx::cpu::testing
