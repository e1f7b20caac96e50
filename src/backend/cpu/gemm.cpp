// gemm.h's product: the blocked driver (gemm_driver.inc) over three register
// kernels, baseline x86-64 (std::fma), AVX2+FMA and AVX-512, the widest the
// CPU supports chosen at run time (isa.h). Each kernel keeps an MR x NR tile
// of C in registers and adds one product of k per fused multiply-add, in k's
// order, so all three give the same bits.
// Packing copies a tile's rows of 14 or 32 floats: inline, never a memmove call.
#pragma GCC optimize("O3", "no-trapping-math", "fp-contract=off", "no-tree-loop-distribute-patterns")
#include "backend/cpu/gemm.h"

#include <algorithm>
#include <cmath>

#include "backend/cpu/isa.h"

#if SX_ISA_CLONES
#include <immintrin.h>
#endif

namespace sx::cpu {
namespace {
constexpr int64_t kGemmKc = 256;     // k per packed block
constexpr int64_t kGemmMcMax = 144;  // rows per packed block of op(A), the most of any kernel
constexpr int64_t kGemmNrMax = 32;   // columns per register tile, the most of any kernel
int64_t round_up(int64_t n, int64_t q) { return (n + q - 1) / q * q; }

// Row r, step p of a packed micro-panel of op(A) (gemm_driver.inc's pack_a):
// rows kGemmKc apart, or MR values per p.
template <bool kRowsA, int MR>
inline float a_at(const float* a, int r, int64_t p) {
  return kRowsA ? a[r * kGemmKc + p] : a[p * MR + r];
}
}  // namespace

// Scalar: the compiler does not vectorise std::fma without FMA in the target,
// so this is slow, and only for CPUs without AVX2.
namespace gemm_baseline {
struct Micro {
  static constexpr int MR = 4, NR = 16;
  static constexpr int64_t MC = 96;
  template <bool kRowsA>
  static void kernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool first, bool last,
                     float alpha) {
    float acc[MR][NR];
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < NR; ++j) acc[r][j] = first ? 0.0f : c[r * ldc + j];
    for (int64_t p = 0; p < kc; ++p, b += NR)
      for (int r = 0; r < MR; ++r)
        for (int j = 0; j < NR; ++j) acc[r][j] = std::fma(a_at<kRowsA, MR>(a, r, p), b[j], acc[r][j]);
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < NR; ++j) c[r * ldc + j] = last && alpha != 1.0f ? acc[r][j] * alpha : acc[r][j];
  }
};
}  // namespace gemm_baseline
#define SX_GEMM_NS gemm_baseline
#include "backend/cpu/gemm_driver.inc"
#undef SX_GEMM_NS

#if SX_ISA_CLONES
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace gemm_avx2 {
struct Micro {
  static constexpr int MR = 6, NR = 16;
  static constexpr int64_t MC = 96;
  template <bool kRowsA>
  static void kernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool first, bool last,
                     float alpha) {
    __m256 c0[MR], c1[MR];
    for (int r = 0; r < MR; ++r) {
      c0[r] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(c + r * ldc);
      c1[r] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(c + r * ldc + 8);
    }
    for (int64_t p = 0; p < kc; ++p, b += NR) {
      __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
      for (int r = 0; r < MR; ++r) {
        __m256 x = _mm256_set1_ps(a_at<kRowsA, MR>(a, r, p));
        c0[r] = _mm256_fmadd_ps(x, b0, c0[r]);
        c1[r] = _mm256_fmadd_ps(x, b1, c1[r]);
      }
    }
    if (last && alpha != 1.0f) {
      __m256 s = _mm256_set1_ps(alpha);
      for (int r = 0; r < MR; ++r) c0[r] = _mm256_mul_ps(c0[r], s), c1[r] = _mm256_mul_ps(c1[r], s);
    }
    for (int r = 0; r < MR; ++r) {
      _mm256_storeu_ps(c + r * ldc, c0[r]);
      _mm256_storeu_ps(c + r * ldc + 8, c1[r]);
    }
  }
};
}  // namespace gemm_avx2
#define SX_GEMM_NS gemm_avx2
#include "backend/cpu/gemm_driver.inc"
#undef SX_GEMM_NS
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512vl,avx512bw,avx512dq")
namespace gemm_avx512 {
struct Micro {
  static constexpr int MR = 14, NR = 32;
  static constexpr int64_t MC = 140;
  template <bool kRowsA>
  static void kernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool first, bool last,
                     float alpha) {
    __m512 c0[MR], c1[MR];
    for (int r = 0; r < MR; ++r) {
      c0[r] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc);
      c1[r] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc + 16);
    }
    for (int64_t p = 0; p < kc; ++p, b += NR) {
      __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
      for (int r = 0; r < MR; ++r) {
        __m512 x = _mm512_set1_ps(a_at<kRowsA, MR>(a, r, p));
        c0[r] = _mm512_fmadd_ps(x, b0, c0[r]);
        c1[r] = _mm512_fmadd_ps(x, b1, c1[r]);
      }
    }
    if (last && alpha != 1.0f) {
      __m512 s = _mm512_set1_ps(alpha);
      for (int r = 0; r < MR; ++r) c0[r] = _mm512_mul_ps(c0[r], s), c1[r] = _mm512_mul_ps(c1[r], s);
    }
    for (int r = 0; r < MR; ++r) {
      _mm512_storeu_ps(c + r * ldc, c0[r]);
      _mm512_storeu_ps(c + r * ldc + 16, c1[r]);
    }
  }
};
}  // namespace gemm_avx512
#define SX_GEMM_NS gemm_avx512
#include "backend/cpu/gemm_driver.inc"
#undef SX_GEMM_NS
#pragma GCC pop_options
#endif

namespace {
// AVX2 without FMA (no such CPU is common) takes the baseline kernel.
Isa gemm_isa() {
  static const bool fma = [] {
#if SX_ISA_CLONES
    __builtin_cpu_init();
    return __builtin_cpu_supports("fma") != 0;
#else
    return false;
#endif
  }();
  Isa i = isa();
  return i == Isa::Avx2 && !fma ? Isa::Baseline : i;
}
}  // namespace

int64_t gemm_thread_floats(int64_t n) {
  return kGemmMcMax * kGemmKc + kGemmKc * round_up(std::max<int64_t>(n, 1), kGemmNrMax);
}

int64_t gemm_shared_floats(int64_t m, int64_t k, int64_t n) {
  // op(B)'s panels, then op(A)'s blocks: at most m + MC rows of whole k blocks.
  return std::max<int64_t>(k, 1) * round_up(std::max<int64_t>(n, 1), kGemmNrMax) +
         (std::max<int64_t>(m, 0) + kGemmMcMax) * round_up(std::max<int64_t>(k, 1), kGemmKc);
}

namespace {
// k = 0: an empty sum is +0 in every element.
bool trivial(const Gemm& g) {
  if (g.m <= 0 || g.n <= 0) return true;
  if (g.k > 0) return false;
  for (int64_t i = 0; i < g.m; ++i) std::fill(g.c + i * g.ldc, g.c + i * g.ldc + g.n, 0.0f);
  return true;
}
}  // namespace

void gemm(const Gemm& g, float* scratch) {
  if (trivial(g)) return;
  switch (gemm_isa()) {
#if SX_ISA_CLONES
    case Isa::Avx512:
      return gemm_avx512::gemm(g, scratch);
    case Isa::Avx2:
      return gemm_avx2::gemm(g, scratch);
#endif
    default:
      return gemm_baseline::gemm(g, scratch);
  }
}

void gemm(const Gemm& g, ThreadPool& pool, float* shared, float* const* scratch) {
  if (trivial(g)) return;
  double flops = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  if (pool.size() == 1 || flops < kGemmParallelFlops) return gemm(g, scratch[0]);
  switch (gemm_isa()) {
#if SX_ISA_CLONES
    case Isa::Avx512:
      return gemm_avx512::gemm(g, pool, shared, scratch);
    case Isa::Avx2:
      return gemm_avx2::gemm(g, pool, shared, scratch);
#endif
    default:
      return gemm_baseline::gemm(g, pool, shared, scratch);
  }
}

}  // namespace sx::cpu
