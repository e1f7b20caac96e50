// gemm.h's blocking from the machine's caches (cache_info.h) and its bf16
// product: the derived blocking is sane for a few CPUs' caches; whatever the
// caches, the instruction set and the threads, an f32 product is the fused
// multiply-add chain and a bf16 product the definition (vdpbf16ps's), bit
// for bit, against scalar references written here from the definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cache_info.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/gemm_test_util.h"
#include "backend/cpu/isa.h"

namespace sx::cpu {
namespace {

constexpr CacheSizes kZen4{32 << 10, 1 << 20, 32 << 20};
constexpr CacheSizes kZen3{32 << 10, 512 << 10, 32 << 20};
constexpr CacheSizes kSapphireRapids{48 << 10, 2 << 20, 105 << 20};
constexpr CacheSizes kSmall{4 << 10, 64 << 10, 256 << 10};  // forces the smallest blocks and many groups

// Every instruction set the CPU has, and AVX-512 once more with bf16
// products on the bf16 units where it has them.
// Every instruction set the CPU has, AVX-512 once more with bf16 products
// on the bf16 units where it has them, and the AMX kernel on software tiles
// (whose tdpbf16ps is the definition: the driver's packing and tiling for
// AMX, on any CPU; the hardware's tiles are amx_bf16_test.cpp's).
struct Path {
  Isa isa;
  bool bf16_units;
  std::string name;
  AmxTiles amx = AmxTiles::Off;
};
std::vector<Path> paths() {
  std::vector<Path> out;
  for (Isa i : {Isa::Baseline, Isa::Avx2, Isa::Avx512})
    if (static_cast<int>(i) <= static_cast<int>(best_isa())) out.push_back({i, false, isa_name(i)});
  set_isa(best_isa());
  if (best_isa() == Isa::Avx512 && set_gemm_bf16_units(true)) out.push_back({Isa::Avx512, true, "avx512-bf16"});
  set_gemm_bf16_units(false);
  out.push_back({best_isa(), false, "amx-software", AmxTiles::Software});
  return out;
}
void use(const Path& p) {
  set_isa(p.isa);
  EXPECT_EQ(set_gemm_bf16_units(p.bf16_units), p.bf16_units);
  EXPECT_EQ(set_gemm_amx(p.amx), p.amx);
}

struct Guard {
  Isa saved = isa();
  ~Guard() {
    set_isa(saved);
    set_gemm_caches(nullptr);
    set_gemm_bf16_units(false);
    set_gemm_amx(AmxTiles::Off);
  }
};

TEST(GemmBlocking, DerivedFromTheCachesAndSane) {
  for (const CacheSizes& c : {kZen3, kZen4, kSapphireRapids, kSmall, machine_caches()})
    for (Isa i : {Isa::Baseline, Isa::Avx2, Isa::Avx512}) {
      int mr = 0, nr = 0;
      gemm_tile(i, &mr, &nr);
      for (int64_t k : {1, 256, 2048})
        for (int threads : {1, 2, 16}) {
          GemmBlocking b = derive_blocking(c, mr, nr, k, threads);
          std::string what = cache_sizes_text(c) + " " + isa_name(i);
          EXPECT_EQ(b.kc % 16, 0) << what;
          EXPECT_GE(b.kc, 64) << what;
          EXPECT_LE(b.kc, kGemmKcMax) << what;
          EXPECT_TRUE(b.kc == 64 || b.kc * nr * 4 <= c.l1d) << what << ": op(B)'s micro-panel overflows L1";
          EXPECT_EQ(b.mc % mr, 0) << what;
          EXPECT_GE(b.mc, mr) << what;
          EXPECT_LE(b.mc, kGemmMcMax) << what;
          EXPECT_TRUE(b.mc == mr || b.mc * b.kc * 4 <= c.l2 / 2) << what << ": op(A)'s block fills L2";
          EXPECT_GE(b.nc_panels, 1) << what;
          EXPECT_EQ(b.whole_rows % mr, 0) << what;
          EXPECT_GE(b.whole_rows, b.mc) << what;
          EXPECT_LE(b.whole_rows, kGemmMcMax) << what;
          EXPECT_TRUE(b.whole_rows == b.mc || b.whole_rows * b.kc * 4 <= c.l2 * 3 / 4)
              << what << ": op(A) overflows L2";
        }
    }
  // The figures docs/performance.md gives.
  int mr = 0, nr = 0;
  gemm_tile(Isa::Avx2, &mr, &nr);
  GemmBlocking zen4 = derive_blocking(kZen4, mr, nr, 256, 2), spr = derive_blocking(kSapphireRapids, mr, nr, 256, 2);
  EXPECT_EQ(zen4.kc, 384);  // k = 256 in one block
  EXPECT_EQ(zen4.mc, 336);
  EXPECT_EQ(spr.kc, 384);
  EXPECT_EQ(derive_blocking(kZen4, mr, nr, 2048, 2).kc, 352);  // six blocks: 5 x 352 + 288, not 5 x 384 + 128
  // A Zen 3 keeps a weight gradient's 256 rows of op(A) whole in L2 (186 in a row block).
  EXPECT_EQ(derive_blocking(kZen3, mr, nr, 2048, 2).mc, 186);
  EXPECT_EQ(derive_blocking(kZen3, mr, nr, 2048, 2).whole_rows, 276);
  gemm_tile(Isa::Avx512, &mr, &nr);
  EXPECT_EQ(derive_blocking(kZen4, mr, nr, 256, 2).kc, 256);
  EXPECT_EQ(derive_blocking(kZen4, mr, nr, 1024, 2).kc, 256);
  EXPECT_EQ(derive_blocking(kSapphireRapids, mr, nr, 2048, 2).kc, 352);
  EXPECT_EQ(derive_blocking(kSapphireRapids, mr, nr, 1024, 2).kc, 352);  // three blocks: 2 x 352 + 320
  EXPECT_EQ(derive_blocking(kSapphireRapids, mr, nr, 1024, 2).mc, 504);
  // A big op(B) is cut into groups that fit a thread's share of L3.
  EXPECT_EQ(derive_blocking(kZen4, mr, nr, 2048, 2).nc_panels, (32 << 20) / 2 / 2 / (2048 * nr * 4));
}

TEST(GemmBlocking, CachesFromSysfsOrDefaults) {
  auto dir = std::filesystem::temp_directory_path() / ("sx_cache_info_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  struct Index {
    const char *level, *type, *size;
  };
  // Zen 4's cpu0 as Linux describes it; the instruction cache is not data.
  Index idx[] = {
      {"1", "Data", "32K"}, {"1", "Instruction", "64K"}, {"2", "Unified", "1024K"}, {"3", "Unified", "32768K"}};
  for (int i = 0; i < 4; ++i) {
    auto d = dir / ("index" + std::to_string(i));
    std::filesystem::create_directories(d);
    std::ofstream(d / "level") << idx[i].level << "\n";
    std::ofstream(d / "type") << idx[i].type << "\n";
    std::ofstream(d / "size") << idx[i].size << "\n";
  }
  CacheSizes c = read_sysfs_caches(dir.string());
  EXPECT_EQ(c.l1d, 32 << 10);
  EXPECT_EQ(c.l2, 1 << 20);
  EXPECT_EQ(c.l3, 32 << 20);
  EXPECT_EQ(cache_sizes_text(c), "32K/1M/32M");
  std::filesystem::remove_all(dir / "index3");
  EXPECT_EQ(read_sysfs_caches(dir.string()).l3, 0);
  std::filesystem::remove_all(dir);
  CacheSizes none = read_sysfs_caches(dir.string());
  EXPECT_EQ(none.l1d + none.l2 + none.l3, 0);
  const CacheSizes& m = machine_caches();  // whatever sysfs and cpuid say here, never 0
  EXPECT_GT(m.l1d, 0);
  EXPECT_GT(m.l2, 0);
  EXPECT_GT(m.l3, 0);
}

// AMD's older size leaves, as the 2-core Zen 5 VM of docs/performance.md
// answers them (it zeroes 0x8000001D): 48K L1d, 1M L2, and an L3 of 1016
// units of 512 KiB (the whole socket's, as that hypervisor reports it).
TEST(CacheInfo, AmdLegacyLeavesDecoded) {
  CacheSizes c = amd_legacy_caches(0x300c0140u, 0x04006140u, 0x0fe09140u);
  EXPECT_EQ(c.l1d, 48 << 10);
  EXPECT_EQ(c.l2, 1 << 20);
  EXPECT_EQ(c.l3, int64_t{1016} << 19);
  CacheSizes none = amd_legacy_caches(0, 0, 0);  // a leaf that says nothing gives no size
  EXPECT_EQ(none.l1d + none.l2 + none.l3, 0);
}

// The bf16 product's step as Intel's SDM defines VDPBF16PS's ("FP32 FMA with
// DAZ in, FTZ out and RNE rounding"), written independently of gemm.cpp:
// the exact value in long double (exact for the cases below), tininess
// after rounding with the exponent range unbounded.
using testing::bits;
using testing::daz;
float sdm_fma(float a, float b, float c) {
  a = daz(a), b = daz(b), c = daz(c);
  float r = std::fma(a, b, c);
  if (std::fpclassify(r) == FP_SUBNORMAL) return std::copysign(0.0f, r);
  long double v = static_cast<long double>(a) * b + c;
  if (std::fabs(r) == 0x1p-126f && std::fabs(v) < 0x1p-126L - 0x1p-151L) return std::copysign(0.0f, r);
  return r;
}
// bf16 rounding, nearest even, of a finite value; then DAZ.
float bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  std::memcpy(&x, &u, 4);
  return daz(x);
}

TEST(GemmBf16, StepIsTheSdmFma) {
  struct Case {
    float a, b, c, want;
  };
  std::vector<Case> cases = {
      {1.5f, 2.0f, 0.25f, 3.25f},
      {0x1p-70f, 0x1p-70f, 0.0f, 0.0f},                 // a denormal result: flushed
      {-0x1p-70f, 0x1p-70f, 0.0f, -0.0f},               // to a zero of its sign
      {-1.5f * 0x1p-76f, 0x1p-75f, 0x1p-126f, 0.0f},    // 2^-126 with gradual underflow, tiny unbounded
      {-0x1p-76f, 0x1p-76f, 0x1p-126f, 0x1p-126f},      // rounds to 2^-126 either way
      {-0x1p-76f, 0x1p-75f, 0x1p-126f, 0x1p-126f},      // the tie: to even, 2^-126, not tiny
      {0x1p-127f, 1.0f, 1.0f, 1.0f},                    // a denormal input is zero
      {1.0f, 1.0f, 0x1p-140f, 1.0f},                    // so is a denormal accumulator
      {-1.0f, 0x1p-126f, 0x1p-126f + 0x1p-133f, 0.0f},  // cancellation into the denormals
      {3.0f, 0x1p127f, 0.0f, std::numeric_limits<float>::infinity()},
  };
  for (const Case& k : cases) {
    EXPECT_EQ(bits(sdm_fma(k.a, k.b, k.c)), bits(k.want)) << k.a << " * " << k.b << " + " << k.c << " (reference)";
    EXPECT_EQ(bits(bf16_fma(daz(k.a), daz(k.b), daz(k.c))), bits(k.want)) << k.a << " * " << k.b << " + " << k.c;
  }
  EXPECT_EQ(bits(bf16_operand(0x1p-130f)), bits(0.0f));
  EXPECT_EQ(bits(bf16_operand(-0x1p-130f)), bits(-0.0f));
  EXPECT_EQ(bits(bf16_operand(1.0f + 0x1p-8f)), bits(1.0f));  // the tie to even
  EXPECT_EQ(bits(bf16_operand(1.0f + 0x1p-7f + 0x1p-8f)), bits(1.0f + 0x1p-6f));
}

struct Operands {
  int64_t m, n, k;
  bool ta, tb;
  float alpha;
  std::vector<float> a, b;

  Operands(int64_t m_, int64_t n_, int64_t k_, bool ta_, bool tb_, float alpha_, uint32_t seed, bool tiny)
      : m(m_), n(n_), k(k_), ta(ta_), tb(tb_), alpha(alpha_) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    a.resize(static_cast<size_t>(m * k));
    b.resize(static_cast<size_t>(k * n));
    // tiny: values near 2^-63 whose products land around the normal range's
    // edge, where the flush decides, and every 17th of A denormal itself.
    for (size_t e = 0; e < a.size(); ++e) a[e] = u(rng) * (!tiny ? 1.0f : e % 17 ? 0x1p-63f : 0x1p-128f);
    for (float& x : b) x = u(rng) * (tiny ? 0x1p-62f : 1.0f);
  }
  float at_a(int64_t i, int64_t p) const { return ta ? a[p * m + i] : a[i * k + p]; }
  float at_b(int64_t p, int64_t j) const { return tb ? b[j * k + p] : b[p * n + j]; }
  Gemm call(std::vector<float>& c, bool bf) const {
    c.assign(static_cast<size_t>(m * n), -7.0f);
    return {.m = m,
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
            .alpha = alpha,
            .bf16 = bf};
  }
  std::vector<float> want(bool bf) const {
    std::vector<float> c(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float s = 0.0f;
        if (!bf)
          for (int64_t p = 0; p < k; ++p) s = std::fma(at_a(i, p), at_b(p, j), s);
        else
          for (int64_t p = 0; p < k; p += 2) {  // the pair's second product first; an odd k's pad is 0 x 0
            s = p + 1 < k ? sdm_fma(bf16(at_a(i, p + 1)), bf16(at_b(p + 1, j)), s) : sdm_fma(0.0f, 0.0f, s);
            s = sdm_fma(bf16(at_a(i, p)), bf16(at_b(p, j)), s);
          }
        c[i * n + j] = alpha != 1.0f ? s * alpha : s;
      }
    return c;
  }
};

using testing::run_gemm;
using testing::same_bits;

std::vector<float> serial(const Operands& o, bool bf) {
  std::vector<float> c;
  run_gemm(o.call(c, bf), 0);
  return c;
}

std::vector<float> parallel(const Operands& o, bool bf, int threads) {
  std::vector<float> c;
  run_gemm(o.call(c, bf), threads);
  return c;
}

// Every blocking, every instruction set, serially and on 1-3 threads: f32 is
// the chain and bf16 the definition, bit for bit. The shapes cross the k
// blocks of every blocking (64 ... 384), the row blocks, the groups and the
// threads' column groups, with odd k (a bf16 pad) and both transposes.
TEST(GemmBlocking, SameBitsForEveryBlockingIsaAndThreadCount) {
  Guard guard;
  struct Shape {
    int64_t m, n, k;
  };
  // 130 x 400: few rows and enough panels for the threads to split op(B)'s
  // columns (gemm_column_groups) with every instruction set's tile. n = 16
  // and 32: one panel of NR columns, read where it lies (b_in_place), over
  // several k blocks.
  std::vector<Shape> shapes = {{7, 9, 5},     {97, 65, 385},   {520, 40, 129}, {33, 200, 771},
                               {600, 40, 64}, {130, 400, 300}, {45, 32, 700},  {45, 16, 700}};
  for (const Shape& s : shapes)
    for (int t = 0; t < 4; ++t)
      for (bool bf : {false, true}) {
        Operands o(s.m, s.n, s.k, t & 1, t & 2, t == 2 ? 0.125f : 1.0f, static_cast<uint32_t>(s.k + t), false);
        auto want = o.want(bf);
        for (const CacheSizes& c : {kZen3, kZen4, kSapphireRapids, kSmall, machine_caches()}) {
          set_gemm_caches(&c);
          for (const Path& path : paths()) {
            use(path);
            std::string what = cache_sizes_text(c) + " " + path.name + (bf ? " bf16 " : " f32 ") + std::to_string(s.m) +
                               "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " ta=" + std::to_string(o.ta) +
                               " tb=" + std::to_string(o.tb);
            EXPECT_TRUE(same_bits(serial(o, bf), want)) << what << ", serial";
            for (int threads : {2, 3})
              EXPECT_TRUE(same_bits(parallel(o, bf, threads), want)) << what << ", " << threads;
          }
        }
      }
}

// Near the bottom of the normal range, where every step's flush matters.
TEST(GemmBf16, TinyValuesFlushAlikeOnEveryIsa) {
  Guard guard;
  for (const Path& path : paths()) {
    use(path);
    for (int t = 0; t < 4; ++t) {
      Operands o(31, 47, 67, t & 1, t & 2, 1.0f, 40u + t, true);
      auto want = o.want(true);
      int flushed = 0;
      for (float x : want) flushed += x == 0.0f;
      EXPECT_GT(flushed, 0) << "no result was flushed: the case tests nothing";
      EXPECT_TRUE(same_bits(serial(o, true), want)) << path.name << " t=" << t;
      EXPECT_TRUE(same_bits(parallel(o, true, 2), want)) << path.name << " t=" << t;
    }
  }
}

// A NaN operand makes NaNs in its row of C (op(A)) or its column (op(B)) on
// every path, whatever its payload: the bf16 units read the upper half of
// each operand, where a NaN whose payload is all in the lower half had read
// as an inf (an inf times the other operands: infs, not NaNs).
TEST(GemmBf16, NaNOperandsGiveNaNsOnEveryPath) {
  Guard guard;
  const uint32_t nans[] = {0x7f800001u, 0xff800001u, 0x7fc00000u, 0x7f810000u};
  for (const Path& path : paths()) {
    use(path);
    for (int t = 0; t < 4; ++t) {
      Operands o(20, 40, 33, t & 1, t & 2, 1.0f, 7u + t, false);
      float nan_a, nan_b;
      std::memcpy(&nan_a, &nans[t], 4), std::memcpy(&nan_b, &nans[3 - t], 4);
      o.a[static_cast<size_t>(o.ta ? 5 * o.m + 3 : 3 * o.k + 5)] = nan_a;  // op(A) row 3, step 5
      o.b[static_cast<size_t>(o.tb ? 7 * o.k + 8 : 8 * o.n + 7)] = nan_b;  // op(B) step 8, column 7
      for (const std::vector<float>& c : {serial(o, true), parallel(o, true, 2)})
        for (int64_t i = 0; i < o.m; ++i)
          for (int64_t j = 0; j < o.n; ++j)
            EXPECT_EQ(std::isnan(c[static_cast<size_t>(i * o.n + j)]), i == 3 || j == 7)
                << path.name << " t=" << t << " at " << i << "," << j;
    }
  }
}

// The edge cases of the step, through each instruction set's kernel: a
// pair (p0, p1) with c = a1 b1 = 2^-126 first, then a0 b0 added.
TEST(GemmBf16, TheKernelsFlushAtTheEdgeAsTheDefinition) {
  Guard guard;
  struct Case {
    float a0, b0, want;
  };
  std::vector<Case> cases = {{-1.5f * 0x1p-76f, 0x1p-75f, 0.0f},  // tiny after rounding: flushed
                             {-0x1p-76f, 0x1p-76f, 0x1p-126f},    // tiny before rounding only: kept
                             {-0x1p-76f, 0x1p-75f, 0x1p-126f},    // the tie, to even: kept
                             {-0x1p-63f, 0x1p-63f, 0.0f},         // exact cancellation: +0
                             {-0x1p-63f, 0x1.8p-63f, -0.0f},      // -2^-127: flushed to -0
                             {0x1p-130f, 1.0f, 0x1p-126f}};       // a denormal operand: zero
  for (const Path& path : paths()) {
    use(path);
    for (const Case& k : cases) {
      float a[2] = {k.a0, 0x1p-63f}, b[2] = {k.b0, 0x1p-63f}, c = 7.0f;
      std::vector<float> scratch(static_cast<size_t>(gemm_thread_floats(1)));
      gemm({.m = 1, .n = 1, .k = 2, .a = a, .lda = 2, .b = b, .ldb = 1, .c = &c, .ldc = 1, .bf16 = true},
           scratch.data());
      EXPECT_EQ(bits(c), bits(k.want)) << path.name << ": " << k.a0 << " * " << k.b0 << " + 2^-126 gave " << c;
      float s = sdm_fma(bf16(k.a0), bf16(k.b0), sdm_fma(bf16(0x1p-63f), bf16(0x1p-63f), 0.0f));
      EXPECT_EQ(bits(s), bits(k.want)) << "the reference: " << k.a0 << " * " << k.b0;
    }
  }
}

// Operands where the bf16 units' conversion needs bf16_convert.h's fix
// (denormals that round up to 2^-126), beside denormals that flush and the
// smallest normals, through every packer (op(A) and op(B), each either way)
// on every path: the sums stay near 2^-126, where an operand read as zero
// instead of 2^-126 changes them. The other side's values are in [1, 2).
TEST(GemmBf16, OperandsRoundingUpToTheNormalsAlikeOnEveryPath) {
  Guard guard;
  const uint32_t edges[] = {0x007f8000u, 0x807fffffu, 0x007fc000u, 0x007f7fffu,
                            0x80000001u, 0x00800000u, 0x80812345u, 0x00ffffffu};
  auto edge = [&](size_t e) {
    float x;
    std::memcpy(&x, &edges[e % 8], 4);
    return x;
  };
  for (const Path& path : paths()) {
    use(path);
    for (int t = 0; t < 8; ++t) {  // t & 4: the edges in B
      Operands o(29, 37, 45, t & 1, t & 2, 1.0f, 90u + t, false);
      std::vector<float>& tiny = t & 4 ? o.b : o.a;
      std::vector<float>& big = t & 4 ? o.a : o.b;
      for (size_t e = 0; e < tiny.size(); ++e) tiny[e] = edge(e * 5 + e / 7);
      for (float& x : big) x = std::copysign(1.0f + std::fabs(x), x);
      auto want = o.want(true);
      int normal = 0;
      for (float x : want) normal += std::fabs(x) >= 0x1p-126f && std::fabs(x) < 0x1p-100f;
      EXPECT_GT(normal, 100) << "the sums left 2^-126's neighbourhood: the case tests nothing";
      EXPECT_TRUE(same_bits(serial(o, true), want)) << path.name << " t=" << t;
      EXPECT_TRUE(same_bits(parallel(o, true, 2), want)) << path.name << " t=" << t;
    }
  }
}

}  // namespace
}  // namespace sx::cpu
