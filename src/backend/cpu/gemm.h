#pragma once
// Our single-precision matrix product (the executor's matmuls and attention's
// two products). Every element of C is one fused multiply-add chain over k in
// order, starting from +0: c = fma(a[i,0], b[0,j], 0), then
// c = fma(a[i,p], b[p,j], c) for p = 1 .. k-1, then c * alpha when alpha is
// not 1. Blocking (k blocks keep their partial sums in C and carry on from
// them), tiling, threads and the instruction set change nothing in that
// chain, so the result is bit-identical whatever they are: the baseline
// build does the same chain with std::fma (correctly rounded, so equal to
// the hardware's fused multiply-add).
//
// Why not OpenBLAS: each of our tiles was its own cblas_sgemm call that
// packed its operands again, and OpenBLAS's result depends on where a
// product is cut, so our tiling could not follow the thread count or share
// one packed operand; here both operands are packed once per
// product and shared by every thread, and the AVX-512 kernel uses the
// full vector width (docs/performance.md).
#include <cstdint>

#include "backend/cpu/cache_info.h"
#include "backend/cpu/isa.h"
#include "backend/cpu/thread_pool.h"

namespace sx::cpu {

// C [m, n] = alpha * op(A) op(B), row-major. op(A) [m, k] is A [m, k] with
// row stride lda, or (ta) A [k, m] read transposed; op(B) [k, n] is B [k, n]
// with row stride ldb, or (tb) B [n, k] read transposed. C's row stride is ldc.
//
// bf16: the product of `:precision bf16` (docs/performance.md), defined as
// AVX512-BF16's vdpbf16ps computes it: each operand rounded to bfloat16 (a
// no-op on the graph's round-bf16 values) with denormals read as zero; k in
// pairs (0, 1), (2, 3), ... (an odd k's last pair padded with zeros), and
// per pair c = fma(a[i,p+1], b[p+1,j], c), then c = fma(a[i,p], b[p,j], c),
// each rounded to nearest even and a result below the normal range
// (tiny after rounding) flushed to a zero of its sign; then c * alpha. Every
// instruction set computes exactly that.
struct Gemm {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int64_t lda = 0;
  bool ta = false;
  const float* b = nullptr;
  int64_t ldb = 0;
  bool tb = false;
  float* c = nullptr;
  int64_t ldc = 0;
  float alpha = 1.0f;
  bool bf16 = false;
  // Optional, n floats: added to every row after alpha, c = c * alpha +
  // bias[j], as a following add of a broadcast row would (a linear's bias).
  const float* bias = nullptr;
  // Optional (bf16 products only): C = round_bf16(C) after alpha and the
  // bias, as `:precision bf16` rounds a product's output
  // (graph/precision.h): on the bf16 units by the kernel's store of the
  // last k block, elsewhere in the pass that applies them to each block.
  bool round_output = false;
  // Optional (products of one batch): an elementwise op the plan had next,
  // applied to C once it is final (a tile while it is in L1, after the
  // kernel's store; a bf16 product's block off the bf16 units after
  // round_output's pass, while it is in L2), with
  // the op's own function (vmath.h), so the bits of the op's kernel: Gelu:
  // out = gelu(C) (C kept); GeluGradMul: out = gelu_grad(x) * C; AddAfter:
  // out = C + x; AddBefore: out = x + C (the operands in the add's order).
  // out and x are [m, n] with row stride ldo; out may be C itself or x, not
  // part of either nor of a or b (other tiles still read them).
  enum class Then { None, Gelu, GeluGradMul, AddAfter, AddBefore } then = Then::None;
  const float* then_x = nullptr;
  float* then_out = nullptr;
  int64_t ldo = 0;
  // Optional (op(B) not transposed): n floats set, as op(B) is packed, to
  // the sums of its columns: +0, then each of the k rows added in order, as
  // a sum-to over B's rows adds (a linear's bias gradient, B being gy); of a
  // bf16 product, B's values as given, before the packing's bf16_operand, or
  // with colsum_rounded each rounded to bf16 first (round_bf16, no flush):
  // the values a round-bf16 that the packing was left to would have held.
  float* colsum = nullptr;
  bool colsum_rounded = false;
  // Optional (f32, a product of one k block: attention's backward, head by
  // head), per row i of C: the terms p < k_from[i] and p >= k_to[i] of its
  // chain are zeros times finite values, and its columns j >= n_to[i] are
  // not wanted. A tile runs only the steps some row of it needs, from +0
  // (+0 plus a zero term is +0, and c plus one is c: the same bits), and a
  // tile no row wants is not computed (C keeps what it held). Ignored where
  // the product has several k blocks.
  const int32_t* k_from = nullptr;
  const int32_t* k_to = nullptr;
  const int32_t* n_to = nullptr;
};

// Whether bf16 products run on the CPU's bf16 units (AVX512-BF16's
// vdpbf16ps, with the AVX-512 kernels), which give the definition's bits.
// By default where they run a product's steps kBf16UnitsGain times as fast
// as the f32 units' fused multiply-adds, as measured once in registers
// (bf16_units_pay: a Zen 5, not a Sapphire Rapids), docs/performance.md;
// the bits are the same. set_gemm_bf16_units(true) uses them where the CPU
// has them (tests, the benchmark); it returns whether they are used now.
bool gemm_bf16_units();
bool set_gemm_bf16_units(bool allowed);
// AMX's tdpbf16ps for bf16 products: an opt-in (SEXPGPU_CPU_BF16=amx) that
// gives up the same bits on every CPU. Intel's SDM defines the instruction
// otherwise than the bf16 units' chain: per element and instruction (16
// pairs at most), the even halves' products chained by fused multiply-adds
// from +0, the odd halves' likewise, their sum, added to C, each rounded to
// nearest even with denormals flushed. On the Sapphire Rapids measured, 71%
// of its elements were the definition's bits, exactly as many as that model
// gives on the same inputs (amx_bf16_test.cpp, docs/performance.md).
// Hardware: the CPU's tiles; Software: the same kernel and packing on tiles
// in software whose tdpbf16ps is the definition (the driver's packing and
// edges tested against it on any CPU); Sdm: the same on software tiles whose
// tdpbf16ps is the SDM's (the hardware's bits, on any CPU: the hardware
// kernel is tested against it bit for bit). Off by default.
enum class AmxTiles { Off, Hardware, Software, Sdm };
// Whether this CPU has AMX-BF16 and AVX512-BF16 (whose conversions pack the
// tiles' pairs, used only where they give bf16_operand's bits), and whether
// Linux lets the process use its tiles (asked once, arch_prctl
// ARCH_REQ_XCOMP_PERM: refused, for one, where a thread's sigaltstack is too
// small for the tiles' state).
enum class AmxSupport { Available, NoAmx, NoBf16Conversion, Refused };
AmxSupport amx_support();
inline bool amx_available() { return amx_support() == AmxSupport::Available; }
// For every later bf16 product; Hardware where !amx_available() is
// refused: returns what is used now.
AmxTiles set_gemm_amx(AmxTiles tiles);
AmxTiles gemm_amx();
// Whether this CPU's vdpbf16ps gives the definition's bits (checked on a few
// thousand lanes, bf16_units.cpp); false where it has none. The units are
// used only where it does.
bool bf16_units_give_the_definition();
// Whether this CPU's vcvtne2ps2bf16 with bf16_convert.h's fix gives
// bf16_operand's bits (checked on every bf16 with the low halves that
// decide a rounding, bf16_units.cpp); false where it has none. The units
// are used only where it does too.
bool bf16_conversion_gives_the_definition();
// Steps of a product per nanosecond on one core, in registers: the f32
// units' 16-lane fused multiply-adds (one step a lane) and the bf16 units'
// vdpbf16ps (two); zeros where the CPU has no AVX512-BF16 (bf16_units.cpp,
// about a millisecond).
struct UnitRates {
  double f32 = 0, bf16 = 0;
};
UnitRates measure_unit_rates();
// Whether the bf16 units are worth their pairs' packing: the f32 units'
// path rounds its operands as it packs them too, so what decides is the
// units' steps per cycle: a Zen 5 1.9x (two vdpbf16ps a cycle, as many as
// fused multiply-adds); expected on the Sapphire Rapids of
// docs/performance.md, 1.0x (one vdpbf16ps a cycle, two FMAs).
constexpr double kBf16UnitsGain = 1.3;
bool bf16_units_pay(const UnitRates& rates);

// One step of the bf16 chain: fma(a, b, c) with a, b and c normal or zero,
// rounded to nearest even, a tiny result (after rounding, exponent range
// unbounded, as x86 detects it) flushed to a zero of its sign.
float bf16_fma(float a, float b, float c);
// An operand as the bf16 product reads it: rounded to bf16, a denormal as a
// zero of its sign.
float bf16_operand(float x);

// How a product is tiled (BLIS's names): k blocks of kc (even, so that a
// bf16 pair never straddles two), op(A) blocks of at most mc rows, and
// column groups of at most nc_panels register-tile panels. They change
// which cache each packed block lives in, never the order of an element's
// additions, so never a bit of the result.
// whole_rows: the most rows of op(A) a product may keep whole in one
// thread's L2, a k block at a time, while the threads split op(B)'s panels
// (a weight gradient's few rows: gemm_driver.inc's gemm_column_groups).
struct GemmBlocking {
  int64_t kc = 256, mc = 96, nc_panels = 1 << 20, whole_rows = 96;
};
// The most any blocking uses (the scratch sizes are bounded by them), and
// the most columns of any kernel's register tile.
constexpr int64_t kGemmKcMax = 384, kGemmMcMax = 504, kGemmNrMax = 32;
// The stride of packed op(A)'s rows: a cache line more than the longest k
// block, so that micro-panels (MR rows apart) fall in different sets of L1.
// At kGemmKcMax, 6 or 14 rows apart, all fell in 4 of L1's 64 sets, and the
// packing of a transposed op(A), which writes a piece of every micro-panel
// for each row of A it reads, missed L1 at every write.
constexpr int64_t kGemmARow = kGemmKcMax + 16;
// n rounded up to a multiple of q (a tile's, a pair's), for the blocking and the driver.
inline int64_t round_up(int64_t n, int64_t q) { return (n + q - 1) / q * q; }
// For a register tile of mr x nr floats and these caches: op(B)'s kc x nr
// micro-panel in L1, op(A)'s mc x kc block in half of L2 (whole_rows x kc
// in three quarters of it), a column group's k x nc slab of op(B) in a
// thread's half share of L3 (`threads` sharing it), each clamped to what
// the scratch holds.
GemmBlocking derive_blocking(const CacheSizes& caches, int mr, int nr, int64_t k, int threads);
// The register tile (rows, columns) of an instruction set's kernel.
void gemm_tile(Isa isa, int* mr, int* nr);
// For tests and benchmarks: tile as if the machine had these caches (the
// results are the same bits); nullptr: the machine's own (cache_info.h).
void set_gemm_caches(const CacheSizes* caches);
const CacheSizes& gemm_caches();
// derive_blocking for gemm_caches(), remembered per thread for the last few
// (caches, tile, k, threads) asked.
GemmBlocking blocking_for(int mr, int nr, int64_t k, int threads);

// Per-thread scratch floats for a product with n columns (a packed block of
// each operand), whichever instruction set runs.
int64_t gemm_thread_floats(int64_t n);
// Shared scratch floats for a parallel product: both operands, packed.
int64_t gemm_shared_floats(int64_t m, int64_t k, int64_t n);
// Products below this many flops are not worth waking the pool for.
constexpr double kGemmParallelFlops = 4e6;

// On the calling thread; scratch holds gemm_thread_floats(g.n).
void gemm(const Gemm& g, float* scratch);
// Over the pool: both operands are packed once into `shared`
// (gemm_shared_floats), then row blocks x column groups run on the threads.
// Small products run inline, on scratch[0] (gemm_thread_floats).
void gemm(const Gemm& g, ThreadPool& pool, float* shared, float* const* scratch);

}  // namespace sx::cpu
