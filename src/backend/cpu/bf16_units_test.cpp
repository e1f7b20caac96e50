// The bf16 units against the definitions they are used for (gemm.h's bf16
// product and bf16_operand), on a CPU that has them: vdpbf16ps lane by
// lane, the conversion (bf16_convert.h) on every bf16 and rounding edge,
// and the run-time checks that decide whether the units are used.
#include <gtest/gtest.h>
#include <immintrin.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/bf16_convert.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/gemm_test_util.h"
#include "backend/cpu/isa.h"

namespace sx::cpu {
namespace {

using testing::bits;
using testing::daz;

// The definition against the instruction it is named after, on a CPU that
// has it: vdpbf16ps of random bf16 pairs (normal, tiny, denormal, zero,
// huge, of both signs) onto random accumulators (normal, tiny, zero), lane
// by lane, equals the chain c = bf16_fma(a1, b1, c), c = bf16_fma(a0, b0, c)
// of gemm.h's operands.
[[gnu::target("avx512f,avx512bf16")]] void vdpbf16ps(const uint16_t* a, const uint16_t* b, float* c) {
  __m512 acc = _mm512_loadu_ps(c);
  __m512bh va = (__m512bh)_mm512_loadu_si512(a), vb = (__m512bh)_mm512_loadu_si512(b);
  _mm512_storeu_ps(c, _mm512_dpbf16_ps(acc, va, vb));
}

TEST(GemmBf16, TheDefinitionIsWhatVdpbf16psComputes) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512bf16"))
    GTEST_SKIP() << "this CPU has no AVX512-BF16 (vdpbf16ps) to compare the definition with";
  const bool intel = __builtin_cpu_is("intel");  // the SDM defines the instruction as the chain
  std::mt19937 rng(7);
  auto random_bf16 = [&]() -> uint16_t {
    uint16_t sign = static_cast<uint16_t>((rng() & 1u) << 15);
    switch (rng() % 8) {
      case 0:
        return sign;  // a zero
      case 1:
        return static_cast<uint16_t>(sign | (rng() % 0x7f + 1));  // a denormal
      case 2:
        return static_cast<uint16_t>(sign | ((rng() % 8 + 1) << 7) | rng() % 128);  // tiny normals
      case 3:
        return static_cast<uint16_t>(sign | ((rng() % 16 + 230) << 7) | rng() % 128);  // huge
      default:
        return static_cast<uint16_t>(sign | ((rng() % 40 + 107) << 7) | rng() % 128);  // around 1
    }
  };
  auto widen = [](uint16_t h) {
    uint32_t u = static_cast<uint32_t>(h) << 16;
    float x;
    std::memcpy(&x, &u, 4);
    return x;
  };
  int64_t compared = 0, flushed = 0, differ = 0;
  for (int round = 0; round < 20000; ++round) {
    uint16_t a[32], b[32];
    float c[16], want[16];
    for (int i = 0; i < 32; ++i) a[i] = random_bf16(), b[i] = random_bf16();
    for (int j = 0; j < 16; ++j) {
      switch (rng() % 4) {
        case 0:
          c[j] = 0.0f;
          break;
        case 1:
          c[j] = std::ldexp(static_cast<float>(rng() % 1000 + 1), -130 + static_cast<int>(rng() % 8));
          break;
        default:
          c[j] = std::ldexp(static_cast<float>(static_cast<int>(rng() % 2000001) - 1000000), -20);
          break;
      }
      float s = daz(c[j]);  // the accumulator's denormals read as zero too
      s = bf16_fma(bf16_operand(widen(a[2 * j + 1])), bf16_operand(widen(b[2 * j + 1])), s);
      s = bf16_fma(bf16_operand(widen(a[2 * j])), bf16_operand(widen(b[2 * j])), s);
      want[j] = s;
    }
    vdpbf16ps(a, b, c);
    for (int j = 0; j < 16; ++j, ++compared) {
      flushed += want[j] == 0.0f && widen(a[2 * j]) * widen(b[2 * j]) != 0.0f;
      if (std::isnan(want[j]) && std::isnan(c[j])) continue;
      differ += bits(c[j]) != bits(want[j]);
      if (intel) {
        ASSERT_EQ(bits(c[j]), bits(want[j]))
            << "lane " << j << ": " << widen(a[2 * j + 1]) << " * " << widen(b[2 * j + 1]) << " + " << widen(a[2 * j])
            << " * " << widen(b[2 * j]);
      }
    }
  }
  EXPECT_EQ(compared, 320000);
  EXPECT_GT(flushed, 1000) << "the cases reach the flush to zero";
  // Another vendor's unit is measured, and used for bf16 products only where
  // it gives the definition on every lane here and on the run-time check's.
  if (!intel)
    std::printf("this CPU's vdpbf16ps: %lld of %lld lanes differ from the definition\n", static_cast<long long>(differ),
                static_cast<long long>(compared));
  const bool exact = differ == 0;
  if (intel) {
    EXPECT_TRUE(bf16_units_give_the_definition());
  }
  if (!exact) {
    EXPECT_FALSE(bf16_units_give_the_definition()) << "the run-time check passed a unit that differs";
  }
  EXPECT_EQ(set_gemm_bf16_units(true),
            bf16_units_give_the_definition() && bf16_conversion_gives_the_definition() && isa() == Isa::Avx512);
  set_gemm_bf16_units(false);
}

// The conversion (bf16_convert.h) on every bf16 with the lower halves that
// decide a rounding and random ones, as halves and as pairs, against an
// operand written here from the definition: round to nearest even, a
// denormal result then zero (a denormal that rounds up to 2^-126 is kept),
// a NaN quiet. The run-time check must agree with it; where the SDM (or
// AMD's manual, which repeats it) defines the instruction, the conversion
// must be exact, or the units would silently go unused.
uint16_t operand_half(uint32_t b) {
  if ((b & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>(b >> 16 | 0x40u);
  uint32_t r = (b + 0x7fffu + ((b >> 16) & 1u)) & 0xffff0000u;
  if ((b & 0x7f800000u) == 0x7f800000u) r = b;  // an inf stays one
  float x;
  std::memcpy(&x, &r, 4);
  return static_cast<uint16_t>(bits(daz(x)) >> 16);
}
[[gnu::target("avx512f,avx512bw,avx512bf16")]] void convert(const float* x, uint16_t* halves, uint32_t* pairs,
                                                            int64_t n) {
  bf16_convert::operand_halves(x, halves, n);
  bf16_convert::operand_pairs(x, x + n / 2, pairs, n / 2);
}

TEST(GemmBf16, TheConversionIsBf16OperandWhereTheUnitsAreUsed) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512bf16")) {
    EXPECT_FALSE(bf16_conversion_gives_the_definition());
    GTEST_SKIP() << "this CPU has no AVX512-BF16 (vcvtne2ps2bf16)";
  }
  std::mt19937 rng(11);
  constexpr int64_t kBlock = 4096;
  std::vector<float> x(kBlock);
  std::vector<uint16_t> halves(kBlock);
  std::vector<uint32_t> pairs(kBlock / 2);
  int64_t differ = 0, compared = 0;
  for (int low = 0; low < 10; ++low)
    for (uint32_t top = 0; top < 0x10000; top += kBlock) {
      for (int64_t i = 0; i < kBlock; ++i) {
        const uint32_t lows[] = {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff};
        uint32_t b = ((top + static_cast<uint32_t>(i) * 5) & 0xffffu) << 16 | (low < 6 ? lows[low] : rng() & 0xffffu);
        std::memcpy(&x[static_cast<size_t>(i)], &b, 4);
      }
      convert(x.data(), halves.data(), pairs.data(), kBlock);
      for (int64_t i = 0; i < kBlock; ++i, ++compared) {
        uint16_t want = operand_half(bits(x[static_cast<size_t>(i)]));
        differ += halves[static_cast<size_t>(i)] != want;
        uint16_t paired =
            static_cast<uint16_t>(pairs[static_cast<size_t>(i % (kBlock / 2))] >> (i < kBlock / 2 ? 0 : 16));
        differ += paired != want;
      }
    }
  EXPECT_EQ(compared, 655360);
  EXPECT_EQ(bf16_conversion_gives_the_definition(), differ == 0) << differ << " values differ";
  if (__builtin_cpu_is("intel") || __builtin_cpu_is("amd")) {
    EXPECT_EQ(differ, 0) << "the conversion (with its fix) is not the definition";
  } else if (differ != 0) {
    std::printf("this CPU's vcvtne2ps2bf16: %lld of %lld values differ: its bf16 units are not used\n",
                static_cast<long long>(differ), static_cast<long long>(compared));
    EXPECT_FALSE(set_gemm_bf16_units(true));
  }
  set_gemm_bf16_units(false);
}

// Which units run a bf16 product by default: the bf16 units where they run
// a product's steps at least kBf16UnitsGain times as fast as the f32 units
// (the rule on given rates), measured once on this CPU (rates of a CPU
// without them are zero, and the rule then says no).
TEST(GemmBf16, TheUnitsAreTheDefaultWhereTheyRunStepsFaster) {
  EXPECT_TRUE(bf16_units_pay({.f32 = 100, .bf16 = 190}));                        // a Zen 5's 1.9x
  EXPECT_FALSE(bf16_units_pay({.f32 = 100, .bf16 = 100}));                       // a Sapphire Rapids' expected 1.0x
  EXPECT_FALSE(bf16_units_pay({.f32 = 100, .bf16 = 100 * kBf16UnitsGain - 1}));  // just short
  EXPECT_TRUE(bf16_units_pay({.f32 = 100, .bf16 = 100 * kBf16UnitsGain}));
  EXPECT_FALSE(bf16_units_pay({}));  // no units
  UnitRates rates = measure_unit_rates();
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512bf16")) {
    EXPECT_EQ(rates.f32, 0);
    EXPECT_EQ(rates.bf16, 0);
    GTEST_SKIP() << "this CPU has no AVX512-BF16 (vdpbf16ps) to time";
  }
  EXPECT_TRUE(std::isfinite(rates.f32) && rates.f32 > 0) << rates.f32;
  EXPECT_TRUE(std::isfinite(rates.bf16) && rates.bf16 > 0) << rates.bf16;
  std::printf("steps a ns on one core: f32 units %.1f, bf16 units %.1f (%.2fx): bf16 products run on the %s units\n",
              rates.f32, rates.bf16, rates.bf16 / rates.f32, bf16_units_pay(rates) ? "bf16" : "f32");
}

}  // namespace
}  // namespace sx::cpu
