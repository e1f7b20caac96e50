// gemm.h's product: the blocked driver and register kernel
// (gemm_driver.inc) built for baseline x86-64 (std::fma), AVX2+FMA and
// AVX-512, the widest the CPU supports chosen at run time (isa.h). Each
// kernel keeps an MR x NR tile of C in registers and adds one product of k
// per fused multiply-add, in k's order, so all three give the same bits.
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

// Per instruction set: `Vec` (a vector of W floats and the operations the
// kernel needs), the register tile (kMR rows x kVecs vectors of C) and the
// rows per packed block (kMC); gemm_driver.inc builds the kernel and the
// blocked product from them.

// Scalar: the compiler does not vectorise std::fma without FMA in the target,
// so this is slow, and only for CPUs without AVX2.
namespace gemm_baseline {
struct Vec {
  using T = float;
  static constexpr int W = 1;
  static T zero() { return 0.0f; }
  static T load(const float* p) { return *p; }
  static void store(float* p, T v) { *p = v; }
  static T set1(float x) { return x; }
  static T fmadd(T a, T b, T c) { return std::fma(a, b, c); }
  static T mul(T a, T b) { return a * b; }
};
constexpr int kMR = 4, kVecs = 16;
constexpr int64_t kMC = 96;
}  // namespace gemm_baseline
#define SX_GEMM_NS gemm_baseline
#include "backend/cpu/gemm_driver.inc"
#undef SX_GEMM_NS

#if SX_ISA_CLONES
// Vec for the __m256 and __m512 intrinsics (_mm256_* and _mm512_*).
#define SX_GEMM_VEC(bits)                                                   \
  struct Vec {                                                              \
    using T = __m##bits;                                                    \
    static constexpr int W = bits / 32;                                     \
    static T zero() { return _mm##bits##_setzero_ps(); }                    \
    static T load(const float* p) { return _mm##bits##_loadu_ps(p); }       \
    static void store(float* p, T v) { _mm##bits##_storeu_ps(p, v); }       \
    static T set1(float x) { return _mm##bits##_set1_ps(x); }               \
    static T fmadd(T a, T b, T c) { return _mm##bits##_fmadd_ps(a, b, c); } \
    static T mul(T a, T b) { return _mm##bits##_mul_ps(a, b); }             \
  };

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace gemm_avx2 {
SX_GEMM_VEC(256)
constexpr int kMR = 6, kVecs = 2;  // 12 of the 16 ymm registers accumulate
constexpr int64_t kMC = 96;
}  // namespace gemm_avx2
#define SX_GEMM_NS gemm_avx2
#include "backend/cpu/gemm_driver.inc"
#undef SX_GEMM_NS
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512vl,avx512bw,avx512dq")
namespace gemm_avx512 {
SX_GEMM_VEC(512)
constexpr int kMR = 14, kVecs = 2;  // 28 of the 32 zmm registers accumulate
constexpr int64_t kMC = 140;
}  // namespace gemm_avx512
#define SX_GEMM_NS gemm_avx512
#include "backend/cpu/gemm_driver.inc"
#undef SX_GEMM_NS
#pragma GCC pop_options
#undef SX_GEMM_VEC
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

// The widest instruction set's `call` (a function of gemm_driver.inc).
#if SX_ISA_CLONES
#define SX_GEMM_DISPATCH(call)    \
  switch (gemm_isa()) {           \
    case Isa::Avx512:             \
      return gemm_avx512::call;   \
    case Isa::Avx2:               \
      return gemm_avx2::call;     \
    default:                      \
      return gemm_baseline::call; \
  }
#else
#define SX_GEMM_DISPATCH(call) return gemm_baseline::call;
#endif

void gemm(const Gemm& g, float* scratch) {
  if (trivial(g)) return;
  SX_GEMM_DISPATCH(gemm(g, scratch))
}

void gemm(const Gemm& g, ThreadPool& pool, float* shared, float* const* scratch) {
  if (trivial(g)) return;
  double flops = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  if (pool.size() == 1 || flops < kGemmParallelFlops) return gemm(g, scratch[0]);
  SX_GEMM_DISPATCH(gemm(g, pool, shared))
}
#undef SX_GEMM_DISPATCH

}  // namespace sx::cpu
