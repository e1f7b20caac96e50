// AMX's tdpbf16ps against gemm.h's bf16 product (the definition the
// kernels keep: per pair the odd step first, then the even, each an f32
// fused multiply-add with denormals flushed) and against the SDM's
// tdpbf16ps (per element and instruction, the even halves' products chained
// from +0, the odd halves' likewise, C plus their sum). On the Sapphire
// Rapids measured, 36,108 of the first test's 51,200 elements were the
// definition's bits: exactly as many as the SDM's order gives on those
// inputs. So AMX is not the definition, and its kernel is an opt-in
// (SEXPGPU_CPU_BF16=amx, docs/performance.md) whose bits the software tiles
// of AmxTiles::Sdm give on any CPU; where the CPU has AMX-BF16 the tests
// hold the hardware to them bit for bit.
#include <gtest/gtest.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/gemm.h"
#include "backend/cpu/gemm_test_util.h"

namespace sx::cpu {
namespace {

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// c[16][16] += a[16 rows][16 pairs] . b[16 pairs][16 columns of pairs].
[[gnu::target("amx-tile,amx-bf16")]] void tdpbf16ps(const uint16_t* a, const uint16_t* b, float* c) {
  TileConfig cfg;
  for (int t = 0; t < 3; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  // All 64 bytes named as read (GCC 12's _tile_loadconfig names 8: gemm_amx_tiles.inc).
  __asm__ volatile("ldtilecfg %0" ::"m"(*reinterpret_cast<const uint8_t(*)[64]>(&cfg)));
  _tile_loadd(0, c, 64);
  _tile_loadd(1, a, 64);
  _tile_loadd(2, b, 64);
  _tile_dpbf16ps(0, 1, 2);
  _tile_stored(0, c, 64);
  _tile_release();
}

float widen(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

using testing::bits;

// The SDM's tdpbf16ps for one element over `pairs` pairs: x(i) and y(i) the
// operands of half i (2q the even half of pair q, 2q + 1 the odd).
template <typename X, typename Y>
float sdm_tdpbf16ps(float c, int64_t pairs, X x, Y y) {
  float even = 0.0f, odd = 0.0f;
  for (int64_t q = 0; q < pairs; ++q) {
    even = bf16_fma(x(2 * q), y(2 * q), even);
    odd = bf16_fma(x(2 * q + 1), y(2 * q + 1), odd);
  }
  return bf16_fma(1.0f, c, bf16_fma(1.0f, even, odd));
}

// An element of the AMX kernel's product of k steps as the SDM's
// tdpbf16ps gives it: from +0, per run of 16 pairs (steps 32r to 32r + 31,
// whatever the blocking: gemm.cpp; a last one shorter, with a zero odd
// half for an odd k), x(p) and y(p) the operands of step p.
template <typename X, typename Y>
float sdm_product(int64_t k, X x, Y y) {
  float c = 0.0f;
  for (int64_t r = 0; r < k; r += 32)
    c = sdm_tdpbf16ps(
        c, (std::min(r + 32, k) - r + 1) / 2, [&](int64_t i) { return r + i < k ? x(r + i) : 0.0f; },
        [&](int64_t i) { return r + i < k ? y(r + i) : 0.0f; });
  return c;
}

// One tile product's operands: a[16 rows][16 pairs], b[16 pairs][16
// columns of pairs], c[16][16].
struct TileProduct {
  uint16_t a[16 * 32], b[16 * 32];
  float c[16 * 16];
};

// The tile products the tests below run: 200 of random bf16 (zeros,
// denormals, tiny values, values around 1) and c of multiples of 2^-12, as
// the Sapphire Rapids measured ran them.
std::vector<TileProduct> tile_products() {
  std::mt19937 rng(11);
  auto random_bf16 = [&]() -> uint16_t {
    uint16_t sign = static_cast<uint16_t>((rng() & 1u) << 15);
    switch (rng() % 8) {
      case 0:
        return sign;
      case 1:
        return static_cast<uint16_t>(sign | (rng() % 0x7f + 1));  // a denormal
      case 2:
        return static_cast<uint16_t>(sign | ((rng() % 8 + 1) << 7) | rng() % 128);  // tiny
      default:
        return static_cast<uint16_t>(sign | ((rng() % 40 + 107) << 7) | rng() % 128);  // around 1
    }
  };
  std::vector<TileProduct> products(200);
  for (TileProduct& t : products) {
    for (auto& x : t.a) x = random_bf16();
    for (auto& x : t.b) x = random_bf16();
    for (float& x : t.c) x = std::ldexp(static_cast<float>(static_cast<int>(rng() % 2001) - 1000), -12);
  }
  return products;
}

// Element (m, n) of tile product t: the definition's chain from c, and the
// SDM's tdpbf16ps, with the exact sum and the sum of the terms' sizes.
struct TileElement {
  float chain, sdm;
  double exact, size;
};
TileElement tile_element(const TileProduct& t, int m, int n) {
  auto x = [&](int64_t i) { return bf16_operand(widen(t.a[m * 32 + i])); };  // half i: pair i / 2's, i % 2 the odd
  auto y = [&](int64_t i) { return bf16_operand(widen(t.b[i / 2 * 32 + 2 * n + i % 2])); };
  TileElement e{t.c[m * 16 + n], sdm_tdpbf16ps(t.c[m * 16 + n], 16, x, y), t.c[m * 16 + n], std::fabs(t.c[m * 16 + n])};
  for (int k = 0; k < 16; ++k) {
    e.chain = bf16_fma(x(2 * k), y(2 * k), bf16_fma(x(2 * k + 1), y(2 * k + 1), e.chain));
    for (int h : {2 * k + 1, 2 * k}) e.exact += double(x(h)) * y(h), e.size += std::fabs(double(x(h)) * y(h));
  }
  return e;
}

// On any CPU: the SDM's tdpbf16ps is the definition's bits on exactly as
// many of these elements as AMX's were on the Sapphire Rapids measured
// (36,108 of 51,200, docs/performance.md): the evidence, short of running
// the hardware again, that AMX computes the SDM's order.
TEST(AmxBf16, TheSdmsOrderIsWhatTheSapphireRapidsComputed) {
  int64_t same = 0, total = 0;
  for (const TileProduct& t : tile_products())
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 16; ++n, ++total) {
        TileElement e = tile_element(t, m, n);
        same += bits(e.sdm) == bits(e.chain);
      }
  EXPECT_EQ(total, 51200);
  EXPECT_EQ(same, 36108);
}

// Where the CPU has AMX-BF16: every element of tdpbf16ps is the SDM's bits
// (and so the bf16 dot product within the roundings of its terms), and the
// same when repeated.
TEST(AmxBf16, TileProductsAreTheSdmsBitsRepeatably) {
  // (amx_support: the CPU's AMX-BF16, and Linux's arch_prctl ARCH_REQ_XCOMP_PERM for the tiles' state.)
  if (amx_support() == AmxSupport::Refused) GTEST_SKIP() << "the kernel refuses the AMX tile state (arch_prctl)";
  if (!amx_available()) GTEST_SKIP() << "this CPU has no AMX-BF16 (with AVX512-BF16)";
  int64_t same = 0, total = 0;
  for (const TileProduct& t : tile_products()) {
    float c[16 * 16], again[16 * 16];
    std::memcpy(c, t.c, sizeof c);
    std::memcpy(again, t.c, sizeof c);
    tdpbf16ps(t.a, t.b, c);
    tdpbf16ps(t.a, t.b, again);
    ASSERT_EQ(std::memcmp(c, again, sizeof c), 0) << "the same tile product twice differs";
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 16; ++n, ++total) {
        TileElement e = tile_element(t, m, n);
        float got = c[m * 16 + n];
        same += bits(got) == bits(e.chain);
        // 34 roundings of at most half an ulp of the largest partial sum, and the flushes below 2^-126.
        ASSERT_LE(std::fabs(got - e.exact), 34 * 0x1p-24 * e.size + 0x1p-120) << "row " << m << " column " << n;
        ASSERT_EQ(bits(got), bits(e.sdm)) << "row " << m << " column " << n << ": " << got << ", the SDM's " << e.sdm;
      }
  }
  std::printf("AMX tdpbf16ps: %lld of %lld elements are the definition's bits\n", static_cast<long long>(same),
              static_cast<long long>(total));
}

// The AMX kernel under `tiles` (set_gemm_amx) on products whose shapes
// cross its 16-pair runs, a last shorter run, the k blocks, odd k, C's
// edges and both transposes: the same bits on 1, 2 and 3 threads and when
// repeated, and every element the SDM's product (sdm_product) and the bf16
// product within the roundings of its terms. Returns how many elements are
// the definition's bits, of `total`.
int64_t kernel_against_the_sdm(AmxTiles tiles, int64_t* total) {
  struct Reset {
    ~Reset() { set_gemm_amx(AmxTiles::Off); }
  } reset;
  EXPECT_EQ(set_gemm_amx(tiles), tiles);
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  struct Shape {
    int64_t m, n, k;
  };
  int64_t same = 0;
  *total = 0;
  for (Shape sh : {Shape{7, 9, 5}, Shape{97, 65, 385}, Shape{33, 200, 771}, Shape{130, 400, 300}})
    for (int t = 0; t < 4; ++t) {
      bool ta = t & 1, tb = t & 2;
      int64_t m = sh.m, n = sh.n, k = sh.k;
      std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
      for (float& x : a) x = normal(rng);
      for (float& x : b) x = normal(rng);
      auto at_a = [&](int64_t i, int64_t p) {
        return bf16_operand(a[static_cast<size_t>(ta ? p * m + i : i * k + p)]);
      };
      auto at_b = [&](int64_t p, int64_t j) {
        return bf16_operand(b[static_cast<size_t>(tb ? j * k + p : p * n + j)]);
      };
      auto run = [&](int threads) {
        std::vector<float> c(static_cast<size_t>(m * n));
        Gemm g{.m = m,
               .n = n,
               .k = k,
               .a = a.data(),
               .lda = ta ? m : k,
               .ta = ta,
               .b = b.data(),
               .ldb = tb ? k : n,
               .tb = tb,
               .c = c.data(),
               .ldc = n,
               .bf16 = true};
        testing::run_gemm(g, threads == 1 ? 0 : threads);
        return c;
      };
      std::vector<float> c = run(1);
      std::string what =
          std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " t=" + std::to_string(t);
      for (int threads : {1, 2, 3}) {
        EXPECT_EQ(std::memcmp(run(threads).data(), c.data(), c.size() * 4), 0) << what << " on " << threads;
        if (::testing::Test::HasFailure()) return same;
      }
      int64_t runs = (k + 31) / 32;  // each rounds twice more: its chains' sum, then C plus it
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j, ++*total) {
          double exact = 0, size = 0;
          float chain = 0.0f;
          for (int64_t p = 0; p < k; p += 2) {
            float odd = p + 1 < k ? at_a(i, p + 1) * at_b(p + 1, j) : 0.0f;  // exact: bf16 x bf16 fits a float
            chain = bf16_fma(p + 1 < k ? at_a(i, p + 1) : 0.0f, p + 1 < k ? at_b(p + 1, j) : 0.0f, chain);
            chain = bf16_fma(at_a(i, p), at_b(p, j), chain);
            exact += double(at_a(i, p)) * at_b(p, j) + odd;
            size += std::fabs(double(at_a(i, p)) * at_b(p, j)) + std::fabs(double(odd));
          }
          float got = c[static_cast<size_t>(i * n + j)];
          same += bits(got) == bits(chain);
          // A rounding of at most half an ulp of the running sum per step.
          EXPECT_LE(std::fabs(got - exact), (k + 1 + 2 * runs) * 0x1p-24 * size + 0x1p-120)
              << what << " at " << i << "," << j;
          float sdm = sdm_product(
              k, [&](int64_t p) { return at_a(i, p); }, [&](int64_t p) { return at_b(p, j); });
          EXPECT_EQ(bits(got), bits(sdm)) << what << " at " << i << "," << j << ": " << got << ", the SDM's " << sdm;
          if (::testing::Test::HasFailure()) return same;
        }
    }
  return same;
}

// The software tiles of AmxTiles::Sdm, on any CPU: the driver's packing,
// strides, edges and runs give the SDM's product, which is not the
// definition's bits.
TEST(AmxBf16, SdmTilesGiveTheSdmsProductOnEveryThreadCount) {
  int64_t total = 0, same = kernel_against_the_sdm(AmxTiles::Sdm, &total);
  EXPECT_GT(total - same, total / 20) << "the SDM's order should differ from the definition's on some elements";
  EXPECT_EQ(total, 4 * (7 * 9 + 97 * 65 + 33 * 200 + 130 * 400));
}

// The same bits under another machine's blocking: a 10K L1's KC of 80
// steps (AMX's: 96, whole runs) in place of 384, and smaller row blocks.
TEST(AmxBf16, SdmTilesGiveTheSameBitsForEveryBlocking) {
  CacheSizes small{10 << 10, 64 << 10, 256 << 10};
  set_gemm_caches(&small);
  struct Reset {
    ~Reset() { set_gemm_caches(nullptr); }
  } reset;
  ASSERT_EQ(blocking_for(14, 32, 771, 1).kc, 80);
  int64_t total = 0;
  kernel_against_the_sdm(AmxTiles::Sdm, &total);
}

// The opt-in AMX kernel (set_gemm_amx(AmxTiles::Hardware)) on this CPU's
// tiles: the same, to the bit (the same bits on every thread count, and the
// SDM's: those of every CPU with AMX that follows it, and of AmxTiles::Sdm).
TEST(AmxBf16, TheKernelIsTheSdmProductOnEveryThreadCount) {
  if (!amx_available()) GTEST_SKIP() << "this CPU has no AMX-BF16, or the kernel refuses its tile state";
  int64_t total = 0, same = kernel_against_the_sdm(AmxTiles::Hardware, &total);
  std::printf("the AMX kernel: %lld of %lld elements are the definition's bits\n", static_cast<long long>(same),
              static_cast<long long>(total));
}

}  // namespace
}  // namespace sx::cpu
