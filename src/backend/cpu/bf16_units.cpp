// Whether this CPU's vdpbf16ps computes gemm.h's bf16 product: Intel's SDM
// defines the instruction as that chain, but another vendor's unit could
// round or flush otherwise, and the bf16 units' kernel is used only where
// it gives the definition's bits. Checked once, on pairs and accumulators
// chosen to reach the flushes, the ties and the pair order.
#include <cstdint>
#include <cstring>

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

}  // namespace sx::cpu
#else
namespace sx::cpu {
bool bf16_units_give_the_definition() { return false; }
}  // namespace sx::cpu
#endif
