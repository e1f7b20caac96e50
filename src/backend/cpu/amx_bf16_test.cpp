// AMX's tdpbf16ps against gemm.h's bf16 product (the definition the
// kernels keep: per pair the odd step first, then the even, each an f32
// fused multiply-add with denormals flushed). Where the CPU has AMX-BF16:
// random 16x16 tile products are the bf16 dot product (within f32 rounding
// of the terms' size) and repeat bit for bit, and how many elements are
// the definition's bits is printed. On the Sapphire Rapids measured, about
// 70% are, the rest differ either way, so AMX is not the definition: its
// kernel is an opt-in (SEXPGPU_CPU_BF16=amx, docs/performance.md).
#include <gtest/gtest.h>
#include <immintrin.h>

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
uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

TEST(AmxBf16, TileProductsAreTheBf16DotProductRepeatably) {
  // (amx_support: the CPU's AMX-BF16, and Linux's arch_prctl ARCH_REQ_XCOMP_PERM for the tiles' state.)
  if (amx_support() == AmxSupport::NoAmx) GTEST_SKIP() << "this CPU has no AMX-BF16";
  if (amx_support() == AmxSupport::Refused) GTEST_SKIP() << "the kernel refuses the AMX tile state (arch_prctl)";
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
  int64_t same = 0, total = 0;
  for (int round = 0; round < 200; ++round) {
    uint16_t a[16 * 32], b[16 * 32];
    float c[16 * 16], again[16 * 16], start[16 * 16];
    for (auto& x : a) x = random_bf16();
    for (auto& x : b) x = random_bf16();
    for (float& x : c) x = std::ldexp(static_cast<float>(static_cast<int>(rng() % 2001) - 1000), -12);
    std::memcpy(start, c, sizeof c);
    std::memcpy(again, c, sizeof c);
    tdpbf16ps(a, b, c);
    tdpbf16ps(a, b, again);
    ASSERT_EQ(std::memcmp(c, again, sizeof c), 0) << "the same tile product twice differs";
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 16; ++n, ++total) {
        auto x = [&](int k, int e) { return bf16_operand(widen(a[m * 32 + 2 * k + e])); };
        auto y = [&](int k, int e) { return bf16_operand(widen(b[k * 32 + 2 * n + e])); };
        float s = start[m * 16 + n];
        double exact = s, size = std::fabs(s);
        for (int k = 0; k < 16; ++k) {
          s = bf16_fma(x(k, 0), y(k, 0), bf16_fma(x(k, 1), y(k, 1), s));
          for (int e : {1, 0}) exact += double(x(k, e)) * y(k, e), size += std::fabs(double(x(k, e)) * y(k, e));
        }
        float got = c[m * 16 + n];
        same += bits(got) == bits(s);
        // 33 roundings of at most half an ulp of the largest partial sum, and the flushes below 2^-126.
        ASSERT_LE(std::fabs(got - exact), 33 * 0x1p-24 * size + 0x1p-120) << "row " << m << " column " << n;
      }
  }
  std::printf("AMX tdpbf16ps: %lld of %lld elements are the definition's bits\n", static_cast<long long>(same),
              static_cast<long long>(total));
  EXPECT_EQ(total, 51200);
}

// The opt-in AMX kernel (set_gemm_amx(AmxTiles::Hardware)) on this CPU's
// tiles: every element is the bf16 product within the roundings of its
// terms, and the same bits on 1, 2 and 3 threads and when repeated (the
// promise it keeps on one CPU). The shapes cross its 16-pair runs, a last
// shorter run, the k blocks, odd k, C's edges and both transposes; its
// packing and tiling are checked bit for bit on software tiles on every CPU
// (gemm_blocking_test.cpp's amx-software path).
TEST(AmxBf16, TheKernelIsTheBf16ProductOnEveryThreadCount) {
  if (!amx_available()) GTEST_SKIP() << "this CPU has no AMX-BF16, or the kernel refuses its tile state";
  struct Reset {
    ~Reset() { set_gemm_amx(AmxTiles::Off); }
  } reset;
  ASSERT_EQ(set_gemm_amx(AmxTiles::Hardware), AmxTiles::Hardware);
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  struct Shape {
    int64_t m, n, k;
  };
  int64_t same = 0, total = 0;
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
      for (int threads : {1, 2, 3})
        ASSERT_EQ(std::memcmp(run(threads).data(), c.data(), c.size() * 4), 0) << what << " on " << threads;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j, ++total) {
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
          ASSERT_LE(std::fabs(got - exact), (k + 1) * 0x1p-24 * size + 0x1p-120) << what << " at " << i << "," << j;
        }
    }
  std::printf("the AMX kernel: %lld of %lld elements are the definition's bits\n", static_cast<long long>(same),
              static_cast<long long>(total));
}

}  // namespace
}  // namespace sx::cpu
