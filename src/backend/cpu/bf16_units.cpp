// Whether this CPU's vdpbf16ps computes gemm.h's bf16 product: Intel's SDM
// defines the instruction as that chain, but another vendor's unit could
// round or flush otherwise, and the bf16 units' kernel is used only where
// it gives the definition's bits. Checked once, on pairs and accumulators
// chosen to reach the flushes, the ties and the pair order; and the same
// for its conversion of floats to operands (bf16_convert.h). And how fast
// the units run a product's steps against the f32 units, which decides
// which of the two a bf16 product runs on.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "backend/cpu/bf16_convert.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/isa.h"

#if SX_ISA_CLONES
#include <immintrin.h>

namespace sx::cpu {
namespace {

[[gnu::target("avx512f,avx512bf16")]] void vdpbf16ps(const uint16_t* a, const uint16_t* b, float* c) {
  __m512 acc = _mm512_loadu_ps(c);
  __m512bh va = (__m512bh)_mm512_loadu_si512(a), vb = (__m512bh)_mm512_loadu_si512(b);
  _mm512_storeu_ps(c, _mm512_dpbf16_ps(acc, va, vb));
}

float widen(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

}  // namespace

bool bf16_units_give_the_definition() {
  uint64_t state = 0x9e3779b97f4a7c15u;
  auto next = [&] {
    return static_cast<uint32_t>((state = state * 6364136223846793005u + 1442695040888963407u) >> 33);
  };
  auto pair_value = [&]() -> uint16_t {
    uint32_t r = next();
    uint16_t sign = static_cast<uint16_t>((r & 1u) << 15);
    switch (r >> 1 & 7u) {
      case 0:
        return sign;  // zero
      case 1:
        return static_cast<uint16_t>(sign | (next() % 0x7f + 1));  // denormal
      case 2:
        return static_cast<uint16_t>(sign | ((next() % 8 + 1) << 7) | next() % 128);  // tiny
      default:
        return static_cast<uint16_t>(sign | ((next() % 40 + 107) << 7) | next() % 128);
    }
  };
  for (int round = 0; round < 512; ++round) {
    uint16_t a[32], b[32];
    float c[16], want[16];
    for (int i = 0; i < 32; ++i) a[i] = pair_value(), b[i] = pair_value();
    for (int j = 0; j < 16; ++j) {
      uint32_t r = next();
      c[j] = r % 3 == 0 ? 0.0f : static_cast<float>(static_cast<int>(r % 2000001) - 1000000) * 0x1p-20f;
      if (r % 7 == 0) c[j] *= 0x1p-110f;  // near the bottom of the normal range
      float s = c[j];
      s = bf16_fma(bf16_operand(widen(a[2 * j + 1])), bf16_operand(widen(b[2 * j + 1])), s);
      want[j] = bf16_fma(bf16_operand(widen(a[2 * j])), bf16_operand(widen(b[2 * j])), s);
    }
    vdpbf16ps(a, b, c);
    if (std::memcmp(c, want, sizeof c) != 0) return false;
  }
  return true;
}

namespace {

// Every bf16 (the upper half) with each lower half that decides a
// rounding (none, the least, below, at and above the tie, all), as halves
// and as pairs (the high half from another bf16), against bf16_operand's
// bits: 393,216 values, about a millisecond once (a Zen 5).
[[gnu::target("avx512f,avx512bw,avx512bf16")]] bool conversion_is_bf16_operand() {
  constexpr uint32_t kLows[] = {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff};
  constexpr int64_t kBlock = 1024;
  float x[kBlock];
  uint16_t halves[kBlock], want[kBlock];
  uint32_t pairs[kBlock / 2];
  for (uint32_t low : kLows)
    for (uint32_t top = 0; top < 0x10000; top += kBlock) {
      for (int64_t i = 0; i < kBlock; ++i) {
        // The block's halves in an order that puts each beside others (7 is odd: every top once).
        uint32_t b = ((top + static_cast<uint32_t>(i) * 7) & 0xffffu) << 16 | low;
        std::memcpy(&x[i], &b, 4);
        uint32_t y;
        float r = bf16_operand(x[i]);
        std::memcpy(&y, &r, 4);
        want[i] = static_cast<uint16_t>(y >> 16 | (r != r ? 0x40u : 0u));  // a NaN quieted
      }
      // Tails that are not whole vectors, the lanes past them left as they were.
      std::memset(halves, 0xa5, sizeof halves), std::memset(pairs, 0xa5, sizeof pairs);
      bf16_convert::operand_halves(x, halves, kBlock - 3);
      bf16_convert::operand_pairs(x, low == 0 ? nullptr : x + kBlock / 2, pairs, kBlock / 2 - 5);
      for (int64_t i = 0; i < kBlock; ++i)
        if (halves[i] != (i < kBlock - 3 ? want[i] : 0xa5a5u)) return false;
      for (int64_t i = 0; i < kBlock / 2; ++i) {
        uint32_t high = low == 0 ? 0u : static_cast<uint32_t>(want[i + kBlock / 2]) << 16;
        if (pairs[i] != (i < kBlock / 2 - 5 ? want[i] | high : 0xa5a5a5a5u)) return false;
      }
    }
  return true;
}

}  // namespace

// Asked first, apart: the check's own code is AVX-512's.
bool bf16_conversion_gives_the_definition() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512bf16") && conversion_is_bf16_operand();
}

namespace {

// Steps of a product per nanosecond that `iters` rounds of 12 independent
// 16-lane instructions run in registers: fused multiply-adds (one step a
// lane) or, kDp, vdpbf16ps (a pair of steps a lane). Twelve chains cover
// the latency of either unit on the CPUs measured (4-6 cycles, two issues
// a cycle); the operands pass through an empty asm each round, so that
// nothing is hoisted or folded.
template <bool kDp>
[[gnu::target("avx512f,avx512bf16"), gnu::noinline]] double steps_per_ns(int64_t iters) {
#define SX_EACH_ACC(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define SX_ACC(i) __m512 c##i = _mm512_set1_ps(static_cast<float>(i));
  SX_EACH_ACC(SX_ACC)
  __m512 x = _mm512_set1_ps(0x1p-20f), y = _mm512_set1_ps(0x1p-20f);
  auto start = std::chrono::steady_clock::now();
  for (int64_t it = 0; it < iters; ++it) {
#define SX_STEP(i) c##i = kDp ? _mm512_dpbf16_ps(c##i, (__m512bh)x, (__m512bh)y) : _mm512_fmadd_ps(x, y, c##i);
    SX_EACH_ACC(SX_STEP)
    asm volatile("" : "+v"(x), "+v"(y));
  }
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
#define SX_SUM(i) s = _mm512_add_ps(s, c##i);
  __m512 s = _mm512_setzero_ps();
  SX_EACH_ACC(SX_SUM)
  volatile float sink = _mm512_cvtss_f32(s);  // the chains' results are used
  (void)sink;
#undef SX_SUM
#undef SX_STEP
#undef SX_ACC
#undef SX_EACH_ACC
  return static_cast<double>(iters) * 12 * 16 * (kDp ? 2 : 1) / std::max(ns, 1.0);
}

}  // namespace

UnitRates measure_unit_rates() {
  __builtin_cpu_init();
  UnitRates r;
  if (!__builtin_cpu_supports("avx512bf16")) return r;
  // The best of 8 alternating runs of about 40 us each: a run that the host
  // or a clock still rising slows reads low, and only the best counts.
  for (int run = 0; run < 8; ++run) {
    r.f32 = std::max(r.f32, steps_per_ns<false>(20000));
    r.bf16 = std::max(r.bf16, steps_per_ns<true>(10000));
  }
  return r;
}

}  // namespace sx::cpu
#else
namespace sx::cpu {
bool bf16_units_give_the_definition() { return false; }
bool bf16_conversion_gives_the_definition() { return false; }
UnitRates measure_unit_rates() { return {}; }
}  // namespace sx::cpu
#endif

namespace sx::cpu {
bool bf16_units_pay(const UnitRates& rates) { return rates.f32 > 0 && rates.bf16 >= kBf16UnitsGain * rates.f32; }
}  // namespace sx::cpu
