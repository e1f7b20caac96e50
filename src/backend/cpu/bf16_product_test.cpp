// The executor runs a product of bf16 values (round-bf16 operands, also
// through a transpose, folded into the product or, where the transpose is an
// output too, made) as gemm.h's bf16 product, and a product of f32
// values as the f32 chain: each checked element by element against the
// definitions, on every instruction set and thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cpu/executor.h"
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

// The outputs, checked to have the bits they have with every round-bf16
// (and `also`) an output too, so run.
std::vector<ref::Tensor<float>> with_rounds_run(Case& c, const std::vector<NodeId>& outs, std::vector<NodeId> also,
                                                const std::vector<std::string>& names) {
  for (NodeId id = 0; id < static_cast<NodeId>(c.g.size()); ++id)
    if (c.g.node(id).op == Op::RoundBf16) also.push_back(id);
  also.insert(also.begin(), outs.begin(), outs.end());
  c.fill_params();
  auto left = c.cpu(outs, 2), run = c.cpu(also, 2);
  for (size_t i = 0; i < outs.size(); ++i)
    EXPECT_TRUE(same_bits(left[i], run[i])) << names[i] << " differs with the rounds run";
  return left;
}

// The rounds whose values only bf16 products read as operands are not run
// (skip_operand_rounds: the products' packing rounds them): a parameter's,
// through a transpose too, and one in place over a relu's output; but not
// attention's v (its product with P is f32) nor one a sum reads too. And
// attention's output rounded as it is written (fuse_output_rounds). Each
// output has the bits it has with every round an output (so run), and the
// products are the definition's.
TEST(CpuBf16Product, RoundsOnlyProductsReadGiveTheSameBits) {
  Case c;
  Graph& g = c.g;
  NodeId q = param(g, "q", {2, 3, 8, 16}, {}), k = param(g, "k", {2, 3, 8, 16}, {}),
         v = param(g, "v", {2, 3, 8, 16}, {});
  NodeId a = attention(g, round_bf16(g, q), round_bf16(g, k), round_bf16(g, v), true), att = round_bf16(g, a);
  NodeId x = c.in({8, 16}), w = param(g, "w", {16, 12}, {}), w2 = param(g, "w2", {12, 16}, {});
  NodeId y = matmul(g, round_bf16(g, relu(g, x)), transpose(g, round_bf16(g, w2)));
  NodeId both = round_bf16(g, abs(g, x));  // a product and a sum read it
  NodeId z = matmul(g, both, round_bf16(g, w));
  NodeId s = sum(g, both, 1, false);
  std::vector<NodeId> outs = {att, y, z, s};
  CpuExecutor ex(g, plan::make_plan(g, outs), 2);
  EXPECT_EQ(ex.operand_rounds(), 5) << "q's, k's, w's, w2's and the relu's";
  EXPECT_EQ(ex.output_rounds(), 1) << "attention's output, rounded as it is written";
  // (Attention's output an output too: its round run apart.)
  auto skipped = with_rounds_run(c, outs, {a}, {"attention, rounded", "relu product", "abs product", "abs sum"});
  const std::vector<float>& xv = c.feeds.inputs.begin()->second.f;
  const std::vector<float>&wv = c.feeds.params.at("w").f, &w2v = c.feeds.params.at("w2").f;
  std::vector<float> relu_x(xv.size()), abs_x(xv.size()), w2t(w2v.size());
  for (size_t e = 0; e < xv.size(); ++e)
    relu_x[e] = bf16_operand(std::max(xv[e], 0.0f)), abs_x[e] = bf16_operand(std::fabs(xv[e]));
  for (int64_t p = 0; p < 16; ++p)
    for (int64_t j = 0; j < 12; ++j) w2t[p * 12 + j] = bf16_operand(w2v[j * 16 + p]);
  std::vector<float> w_r(wv.size());
  for (size_t e = 0; e < wv.size(); ++e) w_r[e] = bf16_operand(wv[e]);
  EXPECT_EQ(std::memcmp(skipped[1].f.data(), product(relu_x, w2t, 8, 16, 12, true).data(), 4 * 8 * 12), 0)
      << "relu product";
  EXPECT_EQ(std::memcmp(skipped[2].f.data(), product(abs_x, w_r, 8, 16, 12, true).data(), 4 * 8 * 12), 0)
      << "abs product";
}

// A round not in place over an arena value x is left to its products only
// while x's bytes still hold x when the last of them runs: where x is read
// after them (so lives on), yes; where its last other reader, a neg in place
// over it, runs between the round and the product, no (the product would
// read the neg's values).
TEST(CpuBf16Product, ARoundLeftToProductsReadsItsInputOnlyWhileItLives) {
  Case c;
  Graph& g = c.g;
  NodeId a = c.in({8, 16}), b = c.in({8, 16}), w = round_bf16(g, param(g, "w", {16, 16}, {}));
  NodeId x = add(g, a, b), rx = round_bf16(g, x), dies = neg(g, x), m = matmul(g, rx, w);
  NodeId x2 = sub(g, a, b), m2 = matmul(g, round_bf16(g, x2), w), lives = sum(g, x2, 1, false);
  std::vector<NodeId> outs = {dies, m, m2, lives};
  plan::Plan p = plan::make_plan(g, outs);
  ASSERT_TRUE(p.offset[dies] == p.offset[x] && p.position[rx] < p.position[dies] && p.position[dies] < p.position[m])
      << "the neg is not in place over x between the round and the product: the case tests nothing";
  CpuExecutor ex(g, p, 2);
  EXPECT_EQ(ex.operand_rounds(), 2) << "w's and x2's";
  with_rounds_run(c, outs, {}, {"-x", "x's product", "x2's product", "x2's sum"});
}

}  // namespace
}  // namespace sx::cpu::testing
