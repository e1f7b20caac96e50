// The executor runs a product of bf16 values (round-bf16 operands, also
// through a transpose, folded into the product or, where the transpose is an
// output too, made) as gemm.h's bf16 product, and a product of f32
// values as the f32 chain: each checked element by element against the
// definitions, on every instruction set and thread count.
#include <gtest/gtest.h>

#include <cstring>

#include "backend/cpu/gemm.h"
#include "backend/cpu/isa.h"
#include "backend/cpu/test_util.h"

namespace sx::cpu::testing {
namespace {

using namespace sx::ops;

// C = A B by the definition of gemm.h: bf16 (in pairs, the second first) or the f32 chain.
std::vector<float> product(const std::vector<float>& a, const std::vector<float>& b, int64_t m, int64_t k, int64_t n,
                           bool bf16) {
  std::vector<float> c(static_cast<size_t>(m * n));
  auto at = [&](const std::vector<float>& v, int64_t i, int64_t cols, int64_t j, int64_t rows) {
    return i < rows ? (bf16 ? bf16_operand(v[i * cols + j]) : v[i * cols + j]) : 0.0f;
  };
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float s = 0.0f;
      if (!bf16)
        for (int64_t p = 0; p < k; ++p) s = std::fma(a[i * k + p], b[p * n + j], s);
      else
        for (int64_t p = 0; p < k; p += 2) {
          s = bf16_fma(p + 1 < k ? at(a, i, k, p + 1, m) : 0.0f, p + 1 < k ? at(b, p + 1, n, j, k) : 0.0f, s);
          s = bf16_fma(at(a, i, k, p, m), at(b, p, n, j, k), s);
        }
      c[i * n + j] = s;
    }
  return c;
}

TEST(CpuBf16Product, MatmulOfBf16ValuesIsTheBf16Product) {
  Case c;
  Graph& g = c.g;
  const int64_t m = 37, k = 45, n = 29;  // an odd k: the last pair padded
  NodeId x = c.in({m, k}), w = param(g, "w", {k, n}, {}), wt = param(g, "wt", {n, k}, {});
  NodeId bf = matmul(g, round_bf16(g, x), round_bf16(g, w));
  NodeId tr = transpose(g, round_bf16(g, wt));
  NodeId bf_t = matmul(g, round_bf16(g, x), tr);  // read through the transpose
  NodeId f32 = matmul(g, x, w);
  c.fill_params();
  auto round_all = [](std::vector<float> v) {
    for (float& e : v) e = bf16_operand(e);
    return v;
  };
  const std::vector<float>& xv = c.feeds.inputs.begin()->second.f;
  const std::vector<float>&wv = c.feeds.params.at("w").f, &wtv = c.feeds.params.at("wt").f;
  std::vector<float> wtt(static_cast<size_t>(k * n));
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) wtt[p * n + j] = wtv[j * k + p];
  auto want_bf = product(round_all(xv), round_all(wv), m, k, n, true);
  auto want_bf_t = product(round_all(xv), round_all(wtt), m, k, n, true);
  auto want_f32 = product(xv, wv, m, k, n, false);
  EXPECT_NE(std::memcmp(want_bf.data(), product(round_all(xv), round_all(wv), m, k, n, false).data(), 4 * m * n), 0)
      << "the pair order changes nothing here: the case tests nothing";
  Isa best = best_isa();
  for (Isa i : {Isa::Baseline, Isa::Avx2, Isa::Avx512}) {
    if (static_cast<int>(i) > static_cast<int>(best)) break;
    set_isa(i);
    for (int threads : {1, 2, -1}) {  // -1: two threads, the transpose an output (not folded: made apart)
      auto got = threads > 0 ? c.cpu({bf, bf_t, f32}, threads) : c.cpu({bf, bf_t, f32, tr}, 2);
      std::string what = std::string(isa_name(i)) + ", " + std::to_string(threads) + " threads";
      EXPECT_EQ(std::memcmp(got[0].f.data(), want_bf.data(), 4 * m * n), 0) << "bf16 product, " << what;
      EXPECT_EQ(std::memcmp(got[1].f.data(), want_bf_t.data(), 4 * m * n), 0)
          << "bf16 product of a transpose, " << what;
      EXPECT_EQ(std::memcmp(got[2].f.data(), want_f32.data(), 4 * m * n), 0) << "f32 product, " << what;
    }
  }
  set_isa(best);
}

}  // namespace
}  // namespace sx::cpu::testing
