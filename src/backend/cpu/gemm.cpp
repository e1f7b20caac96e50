// gemm.h's product: the blocked driver and register kernel
// (gemm_driver.inc) built for baseline x86-64 (std::fma), AVX2+FMA and
// AVX-512, the widest the CPU supports chosen at run time (isa.h). Each
// kernel keeps an MR x NR tile of C in registers and adds one product of k
// per fused multiply-add, in k's order, so all three give the same bits
// (for bf16 products, in the pair order of gemm.h, each step flushed alike).
// Packing copies a tile's rows of 14 or 32 floats: inline, never a memmove call.
#pragma GCC optimize("O3", "no-trapping-math", "fp-contract=off", "no-tree-loop-distribute-patterns")
#include "backend/cpu/gemm.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backend/cpu/bf16_convert.h"
#include "backend/cpu/isa.h"
#include "backend/cpu/vmath.h"

#if SX_ISA_CLONES
#include <immintrin.h>
#endif

namespace sx::cpu {
namespace {

// Row r, step p of a packed micro-panel of op(A) (gemm_driver.inc's pack_a):
// rows kGemmARow apart (a constant stride, so the kernel's broadcasts are
// base + offset), or MR values per p.
template <bool kRowsA, int MR>
inline float a_at(const float* a, int r, int64_t p) {
  return kRowsA ? a[r * kGemmARow + p] : a[p * MR + r];
}

// The same for a micro-panel of bf16 pairs (the vdpbf16ps kernel's): pair q
// of row r, (step 2q) in the low half, (2q + 1) in the high, at the places
// a_at gives steps q.
using Word = uint32_t __attribute__((may_alias));
template <bool kRowsA, int MR>
inline uint32_t a_pair(const float* a, int r, int64_t q) {
  const Word* w = reinterpret_cast<const Word*>(a);
  return kRowsA ? w[r * kGemmARow + q] : w[q * MR + r];
}
// The bf16 in the upper half of a float's bits (a packed operand's: the
// lower half zero), a NaN kept a NaN (quiet): the upper half alone of one
// whose payload is all in the lower half would be an inf.
inline uint32_t bf16_half(uint32_t bits) {
  uint32_t h = bits >> 16;
  return (bits & 0x7fffffffu) > 0x7f800000u ? h | 0x40u : h;
}

constexpr float kMinNormal = 0x1p-126f;

inline float signed_zero(float x) { return std::signbit(x) ? -0.0f : 0.0f; }

// gemm.h's bf16_operand, inline for the packing loops.
inline float bf16_operand_f(float x) {
  float y = round_bf16_f(x);
  return std::fabs(y) < kMinNormal ? signed_zero(y) : y;
}

// The upper half of bf16_operand_f(x)'s bits (all the bf16 units read of
// it: a pair's halves; a NaN as bf16_half keeps it), for the pair
// packers, whose loops g++ vectorises whole.
inline uint32_t bf16_operand_bits(float x) {
  float y = bf16_operand_f(x);
  uint32_t b;
  std::memcpy(&b, &y, 4);
  return bf16_half(b);
}

// The pair packers' conversions (gemm_pack.inc), element by element; the
// bf16 units' Vec has its own (bf16_convert.h). n words: word i lo[i]'s
// operand in its low half, hi[i]'s (+0 where hi is null) in its high half.
inline void operand_pairs_f(const float* lo, const float* hi, uint32_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_operand_bits(lo[i]) | (hi ? bf16_operand_bits(hi[i]) << 16 : 0u);
}
// n halves: s[i]'s operand at dst[i].
inline void operand_halves_f(const float* s, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<uint16_t>(bf16_operand_bits(s[i]));
}

// gemm.h's bf16_fma. std::fma rounds with gradual underflow; a result of
// 2^-126 in size may then come from a value the unbounded exponent range
// rounds below it (tiny after rounding, so flushed): decided exactly by the
// same fma scaled by 2^64 (a, b and c are small there, so the scaling is
// exact and the scaled result normal).
[[gnu::noinline]] float bf16_fma_f(float a, float b, float c) {
  float r = std::fma(a, b, c), m = std::fabs(r);
  if (!(m <= kMinNormal) || r == 0.0f) return r;
  if (m < kMinNormal) return signed_zero(r);
  float scaled = std::fma(a * 0x1p64f, b, c * 0x1p64f);
  return std::fabs(scaled) < 0x1p-62f ? signed_zero(r) : r;
}
}  // namespace

#include "backend/cpu/gemm_amx_tiles.inc"

float bf16_fma(float a, float b, float c) { return bf16_fma_f(a, b, c); }
float bf16_operand(float x) { return bf16_operand_f(x); }

// Per instruction set: `Vec` (a vector of W floats and the operations the
// kernel needs) and the register tile (kMR rows x kVecs vectors of C);
// gemm_driver.inc builds the kernel and the blocked product from them.

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
  static T fma_bf16(T a, T b, T c) { return bf16_fma_f(a, b, c); }  // the flushes in software
  static constexpr bool kDpbf16 = false;                            // no bf16 units: the bf16 steps are fma_bf16's
  static constexpr bool kAmx = false;                               // no tiles (gemm_amx_tiles.inc)
  using Tiles = void;
  static constexpr bool kTranspose8 = false;  // pack_b transposes element by element
  static constexpr auto operand_pairs = operand_pairs_f, operand_halves = operand_halves_f;
  static void transpose8(const float* const*, int64_t, float*, int64_t) {}
  static T dpbf16(T acc, uint32_t, T) { return acc; }
  static T mul(T a, T b) { return a * b; }
  static T add(T a, T b) { return a + b; }
  static unsigned ftz_begin() { return 0; }
  static void ftz_end(unsigned) {}
};
constexpr int kMR = 4, kVecs = 16;
}  // namespace gemm_baseline
#define SX_GEMM_NS gemm_baseline
#include "backend/cpu/gemm_driver.inc"
#undef SX_GEMM_NS

// The AMX kernel's driver on SoftTiles, on any CPU (gemm.h's
// set_gemm_amx(AmxTiles::Software or Sdm)): bf16 pairs packed as for the
// bf16 units, the register tile AMX's 14 x 32.
namespace gemm_amx_soft {
struct Vec : gemm_baseline::Vec {
  static constexpr bool kDpbf16 = true, kAmx = true;
  using Tiles = SoftTiles;
};
constexpr int kMR = 14, kVecs = 32;
}  // namespace gemm_amx_soft
#define SX_GEMM_NS gemm_amx_soft
#include "backend/cpu/gemm_driver.inc"
#undef SX_GEMM_NS

#if SX_ISA_CLONES
// Vec for the __m256 and __m512 intrinsics (_mm256_* and _mm512_*). A bf16
// step is the plain fused multiply-add, run between ftz_begin and ftz_end:
// with MXCSR's FTZ and DAZ set, the hardware flushes a tiny result (tiny
// after rounding, as x86 detects it) and reads a denormal operand as zero,
// which is the definition (gemm.h) bit for bit; gemm_blocking_test checks
// it on the machine it runs on against the scalar definition.
#define SX_GEMM_VEC(bits)                                                                                         \
  struct Vec {                                                                                                    \
    using T = __m##bits;                                                                                          \
    static constexpr int W = bits / 32;                                                                           \
    static T zero() { return _mm##bits##_setzero_ps(); }                                                          \
    static T load(const float* p) { return _mm##bits##_loadu_ps(p); }                                             \
    static void store(float* p, T v) { _mm##bits##_storeu_ps(p, v); }                                             \
    static T set1(float x) { return _mm##bits##_set1_ps(x); }                                                     \
    static T fmadd(T a, T b, T c) { return _mm##bits##_fmadd_ps(a, b, c); }                                       \
    static T fma_bf16(T a, T b, T c) { return fmadd(a, b, c); }                                                   \
    static constexpr bool kDpbf16 = false;                                                                        \
    static constexpr bool kAmx = false;                                                                           \
    using Tiles = void;                                                                                           \
    static T dpbf16(T acc, uint32_t, T) { return acc; }                                                           \
    static T mul(T a, T b) { return _mm##bits##_mul_ps(a, b); }                                                   \
    static T add(T a, T b) { return _mm##bits##_add_ps(a, b); }                                                   \
    static unsigned ftz_begin() { return ftz_on(); }                                                              \
    static void ftz_end(unsigned modes) { ftz_restore(modes); }                                                   \
    static constexpr bool kTranspose8 = true;                                                                     \
    static void transpose8(const float* const* s, int64_t p, float* d, int64_t ld) { transpose8x8(s, p, d, ld); } \
    static constexpr auto operand_pairs = operand_pairs_f, operand_halves = operand_halves_f;                     \
  };

// MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6) on, for the
// calling thread; returns what to restore. Not inlined: no arithmetic of the
// caller moves across them.
namespace {
[[gnu::noinline]] unsigned ftz_on() {
  unsigned modes = _mm_getcsr();
  _mm_setcsr(modes | 0x8040u);
  return modes;
}
[[gnu::noinline]] void ftz_restore(unsigned modes) { _mm_setcsr(modes); }

// dst[i * ld + r] = src[r][p + i] for r, i < 8: eight rows of 8 floats
// transposed in registers (a transposed op(B) is packed this way; element
// by element it cost as much as the kernels in a product of k = 32). AVX,
// so that both the AVX2 and the AVX-512 code inline it.
[[gnu::target("avx2"), gnu::always_inline]] inline void transpose8x8(const float* const* src, int64_t p, float* dst,
                                                                     int64_t ld) {
  __m256 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src[i] + p);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(dst + i * ld, _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
    _mm256_storeu_ps(dst + (i + 4) * ld, _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
  }
}
}  // namespace

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace gemm_avx2 {
SX_GEMM_VEC(256)
constexpr int kMR = 6, kVecs = 2;  // 12 of the 16 ymm registers accumulate
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
}  // namespace gemm_avx512
#define SX_GEMM_NS gemm_avx512
#include "backend/cpu/gemm_driver.inc"
#undef SX_GEMM_NS
#pragma GCC pop_options

// AVX512-BF16: a bf16 product's pair of steps in one vdpbf16ps, which is
// the definition (gemm.h) by construction: per lane the odd step's product
// then the even one's, each added with round to nearest even, denormals in
// and out flushed, whatever MXCSR says. gemm_blocking_test compares the
// instruction with the definition on random pairs, and this kernel with the
// others, where the CPU has it.
#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512vl,avx512bw,avx512dq,avx512bf16")
namespace gemm_avx512bf16 {
struct Vec : gemm_avx512::Vec {
  static constexpr bool kDpbf16 = true;
  // acc + the pair a (broadcast) times each lane's pair of b.
  static T dpbf16(T acc, uint32_t a, T b) {
    return _mm512_dpbf16_ps(acc, (__m512bh)_mm512_set1_epi32(static_cast<int>(a)), (__m512bh)b);
  }
  // The pair packers' conversions on the bf16 units (bf16_convert.h).
  static void operand_pairs(const float* lo, const float* hi, uint32_t* dst, int64_t n) {
    bf16_convert::operand_pairs(lo, hi, dst, n);
  }
  static void operand_halves(const float* s, uint16_t* dst, int64_t n) { bf16_convert::operand_halves(s, dst, n); }
  // round_bf16_f on each lane (vmath.h), for the kernel's store of a product
  // whose output is rounded (gemm.h's round_output).
  static T round_bf16(T x) {
    using U = uint32_t __attribute__((vector_size(64)));
    U b = reinterpret_cast<U>(x);
    round_bf16_bits(b);
    return reinterpret_cast<T>(b);
  }
};
constexpr int kMR = gemm_avx512::kMR, kVecs = gemm_avx512::kVecs;
}  // namespace gemm_avx512bf16
#define SX_GEMM_NS gemm_avx512bf16
#include "backend/cpu/gemm_driver.inc"
#undef SX_GEMM_NS

// The opt-in AMX kernel on the hardware's tiles (gemm.h's set_gemm_amx).
#pragma GCC target("amx-tile,amx-bf16")
namespace gemm_amx_hw {
struct Vec : gemm_avx512bf16::Vec {
  static constexpr bool kAmx = true;
  using Tiles = HardTiles;
};
constexpr int kMR = gemm_avx512::kMR, kVecs = gemm_avx512::kVecs;
}  // namespace gemm_amx_hw
#define SX_GEMM_NS gemm_amx_hw
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

void gemm_tile(Isa i, int* mr, int* nr) {
#if SX_ISA_CLONES
  if (i == Isa::Avx512) {
    *mr = gemm_avx512::kMR, *nr = gemm_avx512::kVecs * gemm_avx512::Vec::W;
    return;
  }
  if (i == Isa::Avx2) {
    *mr = gemm_avx2::kMR, *nr = gemm_avx2::kVecs * gemm_avx2::Vec::W;
    return;
  }
#endif
  (void)i;
  *mr = gemm_baseline::kMR, *nr = gemm_baseline::kVecs * gemm_baseline::Vec::W;
}

namespace {
// The default, where they give the definition, is where they run a
// product's steps faster than the f32 units, measured on this CPU
// (bf16_units_pay; docs/performance.md): on AMD's Zen 4 a 1024^3 bf16
// product took 20 ms on them against 32 ms on the f32 units; on the
// Sapphire Rapids measured vdpbf16ps issues once a cycle where two fused
// multiply-adds do, so the units do a pair no faster there, and the pairs'
// packing costs more. Either way the bits are the same.
std::atomic<bool>& bf16_units_allowed() {
  static std::atomic<bool> allowed{bf16_units_pay(measure_unit_rates())};
  return allowed;
}
}  // namespace

bool gemm_bf16_units() {
#if SX_ISA_CLONES
  // Any vendor's unit, once it has computed the definition's bits on the check's lanes.
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bf16") != 0 && bf16_units_give_the_definition() &&
           bf16_conversion_gives_the_definition();
  }();
  return has && bf16_units_allowed().load() && gemm_isa() == Isa::Avx512;
#else
  return false;
#endif
}

bool set_gemm_bf16_units(bool allowed) {
  bf16_units_allowed().store(allowed);
  return gemm_bf16_units();
}

namespace {
// k = 0: an empty sum is +0 in every element (then the bias, if any).
bool trivial(const Gemm& g) {
  if (g.m <= 0 || g.n <= 0) return true;
  if (g.k > 0) return false;
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) g.c[i * g.ldc + j] = g.bias ? 0.0f + g.bias[j] : 0.0f;
  return true;
}
}  // namespace

// The widest instruction set's `call` (a function of gemm_driver.inc), with
// the blocking for its register tile, this product's k and `threads`.
// A bf16 product under set_gemm_amx runs on the tiles (the AMX kernel's
// register tile is 14 x 32 either way).
#if !SX_ISA_CLONES
namespace gemm_amx_hw = gemm_amx_soft;  // never chosen: amx_available() is false
#endif
// Its k blocks are whole runs of 16 pairs (KC a multiple of 32 steps, at
// most kGemmKcMax, itself one), so that each tdpbf16ps covers steps 32r to
// 32r + 31 whatever the caches: the SDM rounds each run's sum, so AMX's
// bits depend on where the runs start, and so on nothing but the operands.
static_assert(kGemmKcMax % 32 == 0);
#define SX_GEMM_AMX(call, threads)                                            \
  if (AmxTiles t = g.bf16 ? gemm_amx() : AmxTiles::Off; t != AmxTiles::Off) { \
    GemmBlocking bl = blocking_for(14, 32, g.k, threads);                     \
    bl.kc = round_up(bl.kc, 32);                                              \
    return t == AmxTiles::Hardware ? gemm_amx_hw::call : gemm_amx_soft::call; \
  }
#if SX_ISA_CLONES
#define SX_GEMM_DISPATCH(call, threads)                              \
  SX_GEMM_AMX(call, threads)                                         \
  Isa i = gemm_isa();                                                \
  int mr = 0, nr = 0;                                                \
  gemm_tile(i, &mr, &nr);                                            \
  GemmBlocking bl = blocking_for(mr, nr, g.k, threads);              \
  switch (i) {                                                       \
    case Isa::Avx512:                                                \
      if (g.bf16 && gemm_bf16_units()) return gemm_avx512bf16::call; \
      return gemm_avx512::call;                                      \
    case Isa::Avx2:                                                  \
      return gemm_avx2::call;                                        \
    default:                                                         \
      return gemm_baseline::call;                                    \
  }
#else
#define SX_GEMM_DISPATCH(call, threads)                 \
  SX_GEMM_AMX(call, threads)                            \
  int mr = 0, nr = 0;                                   \
  gemm_tile(Isa::Baseline, &mr, &nr);                   \
  GemmBlocking bl = blocking_for(mr, nr, g.k, threads); \
  return gemm_baseline::call;
#endif

void gemm(const Gemm& g, float* scratch) {
  if (trivial(g)) return;
  SX_GEMM_DISPATCH(gemm(g, scratch, bl), 1)
}

void gemm(const Gemm& g, ThreadPool& pool, float* shared, float* const* scratch) {
  if (trivial(g)) return;
  double flops = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  if (pool.size() == 1 || flops < kGemmParallelFlops) return gemm(g, scratch[0]);
  SX_GEMM_DISPATCH(gemm(g, pool, shared, scratch, bl), pool.size())
}
#undef SX_GEMM_DISPATCH
#undef SX_GEMM_AMX

}  // namespace sx::cpu
