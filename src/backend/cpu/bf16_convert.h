// Floats to a bf16 product's operands (gemm.h's bf16_operand, as bf16
// halves) by the bf16 units' conversion, vcvtne2ps2bf16, 32 values an
// instruction: the pair packers' (gemm_pack.inc) scalar rounding and flush
// took a dozen instructions a vector, a fifth of the bf16 products' samples.
// The SDM's conversion rounds to nearest even, quiets a NaN as bf16_half
// does and reads a denormal as zero, which is bf16_operand's flush but for
// a denormal that rounds up to 2^-126, which bf16_operand keeps: fixed()
// gives those lanes +-2^-126 first. Used only where
// bf16_conversion_gives_the_definition (bf16_units.cpp) has checked it.
#pragma once

#include <cstdint>

#include "backend/cpu/isa.h"

#if SX_ISA_CLONES
#include <immintrin.h>

namespace sx::cpu::bf16_convert {

#define SX_BF16_CONVERT [[gnu::target("avx512f,avx512bw,avx512bf16"), gnu::always_inline]] inline

// x, but the lanes in [0x007f8000, 0x007fffff] by magnitude (denormals that
// round to 2^-126) as 2^-126 of their sign.
SX_BF16_CONVERT __m512 fixed(__m512 x) {
  __m512i b = _mm512_castps_si512(x), magnitude = _mm512_and_si512(b, _mm512_set1_epi32(0x7fffffff));
  __mmask16 up =
      _mm512_cmplt_epu32_mask(_mm512_sub_epi32(magnitude, _mm512_set1_epi32(0x007f8000)), _mm512_set1_epi32(0x8000));
  return _mm512_castsi512_ps(
      _mm512_mask_or_epi32(b, up, _mm512_and_si512(b, _mm512_set1_epi32(INT32_MIN)), _mm512_set1_epi32(0x00800000)));
}

// The first n of 16 lanes.
SX_BF16_CONVERT __mmask16 first(int64_t n) {
  return n >= 16 ? 0xffff : n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1);
}

// n words: word i lo[i]'s operand in its low half, hi[i]'s (+0 where hi is
// null) in its high half.
SX_BF16_CONVERT void operand_pairs(const float* lo, const float* hi, uint32_t* dst, int64_t n) {
  // Half 2i from lo (the conversion's low 16 halves), 2i + 1 from hi.
  const __m512i interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22,
                                              6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 m = first(n - i);
    __m512 a = fixed(_mm512_maskz_loadu_ps(m, lo + i));
    __m512 b = hi ? fixed(_mm512_maskz_loadu_ps(m, hi + i)) : _mm512_setzero_ps();
    __m512i h = (__m512i)_mm512_cvtne2ps_pbh(b, a);
    _mm512_mask_storeu_epi32(dst + i, m, _mm512_permutexvar_epi16(interleave, h));
  }
}

// n halves: s[i]'s operand at dst[i].
SX_BF16_CONVERT void operand_halves(const float* s, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; i += 32) {
    __m512 a = fixed(_mm512_maskz_loadu_ps(first(n - i), s + i));
    __m512 b = fixed(_mm512_maskz_loadu_ps(first(n - i - 16), s + i + 16));
    __mmask32 m = n - i >= 32 ? ~0u : (1u << (n - i)) - 1;
    _mm512_mask_storeu_epi16(dst + i, m, (__m512i)_mm512_cvtne2ps_pbh(b, a));
  }
}

#undef SX_BF16_CONVERT

}  // namespace sx::cpu::bf16_convert
#endif
