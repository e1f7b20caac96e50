// Training-step graphs: the loss and every gradient (autodiff's backward
// nodes) on the CPU backend against the reference, and bit-identical results
// for 1, 2, 3 and 8 threads and for every instruction set the kernels were
// compiled for (isa.h) that this machine runs.
#include <gtest/gtest.h>

#include <cstring>

#include "autodiff/autodiff.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/isa.h"
#include "backend/cpu/test_util.h"
#include "graph/precision.h"
#include "testing/gpt_graph.h"

namespace sx::cpu::testing {
namespace {

using namespace ops;

struct Step {
  std::vector<NodeId> outs;
  std::vector<std::string> names;
};

// The loss and each param's gradient, as outputs.
Step with_grads(Case& c, NodeId loss) {
  Gradients grads = backward(c.g, loss);
  Step s{{loss}, {"loss"}};
  for (const auto& [path, id] : grads.params) s.outs.push_back(id), s.names.push_back("d " + path);
  return s;
}

void compare(Case& c, const Step& s, double rtol) {
  auto want = ref::evaluate<float>(c.g, c.feeds, s.outs);
  auto got = c.cpu(s.outs, 2);
  for (size_t k = 0; k < s.outs.size(); ++k) expect_close(got[k], want[s.outs[k]], rtol, s.names[k], 1e-7);
}

// bf16: with :precision bf16's rounding nodes, inserted before autodiff as the tracer does.
Case gpt_case(const GptShape& shape, Step* step, bool bf16 = false) {
  Case c;
  c.g.builtin_taps = false;
  GptGraph m = build_gpt(c.g, shape);
  if (bf16) {
    std::vector<NodeId> map;
    c.g = round_products_bf16(c.g, {m.loss}, &map);
    m.loss = map[m.loss];
  }
  std::string t = "tokens", y = "targets";
  for (const std::string& name : {t, y}) {
    std::vector<int32_t> v(shape.batch * shape.seq);
    for (int32_t& x : v) x = static_cast<int32_t>(c.rng() % shape.vocab);
    c.feeds.inputs[name] = ref::Tensor<float>::ints(Shape{shape.batch, shape.seq}, v);
  }
  c.fill_params(0.2f);
  *step = with_grads(c, m.loss);
  return c;
}

TEST(CpuTrain, GptLossAndGradientsMatchTheReference) {
  Step s;
  Case c = gpt_case({.batch = 2, .seq = 9, .vocab = 37, .d = 24, .heads = 3, .layers = 2}, &s);
  compare(c, s, 2e-5);
}

// The rounding points are the same nodes for both backends; their products
// accumulate in different orders, so a value close to a bf16 tie may round
// to a neighbour (2^-8 relative) on one of them: close, not equal.
TEST(CpuTrain, Bf16GptLossAndGradientsMatchTheReference) {
  Step s;
  Case c = gpt_case({.batch = 2, .seq = 9, .vocab = 37, .d = 24, .heads = 3, .layers = 2}, &s, true);
  compare(c, s, 2e-3);
  Step f;
  Case f32 = gpt_case({.batch = 2, .seq = 9, .vocab = 37, .d = 24, .heads = 3, .layers = 2}, &f);
  auto a = c.cpu({s.outs[0]}, 1), b = f32.cpu({f.outs[0]}, 1);
  EXPECT_NE(a[0].f[0], b[0].f[0]) << "bf16's loss is f32's: nothing was rounded";
  EXPECT_NEAR(a[0].f[0], b[0].f[0], 0.05 * std::fabs(b[0].f[0]));
}

TEST(CpuTrain, GradientsOfManyOpsMatchTheReference) {
  Case c;
  Graph& g = c.g;
  NodeId x = c.in({4, 6}), gain = param(g, "gain", {6}, {}), p = param(g, "p", {4, 6}, {});
  NodeId ids = c.ids({5}, 4);
  std::vector<NodeId> terms = {
      softmax(g, mul(g, p, x)),
      log_softmax(g, p, 0),
      rms_norm(g, p, gain),
      max(g, p, 1),
      logsumexp(g, p, 0),
      concat(g, {slice(g, p, 1, 0, 2), tanh(g, slice(g, p, 1, 2, 6))}, 1),
      gather(g, p, ids, 0),
      where(g, gt(g, p, x), sigmoid(g, p), silu(g, mul(g, x, p))),
      div(g, p, add(g, exp(g, x), scalar(g, 1))),
      pow(g, add(g, abs(g, p), scalar(g, 1)), x),
      dropout(g, mul(g, p, gelu(g, p)), 0.25, 7, 1),
      mean(g, sqrt(g, add(g, mul(g, p, p), scalar(g, 1))), 0, true),
      matmul(g, transpose(g, p), relu(g, x)),
      sum_to(g, expand(g, reshape(g, p, {4, 1, 6}), Shape{4, 3, 6}), Shape{1, 3, 6}),
  };
  NodeId loss = scalar(g, 0);
  for (NodeId t : terms) loss = add(g, loss, mean_all(g, mul(g, t, t)));
  c.feeds.rng_offset = 3;
  c.fill_params(0.7f);
  compare(c, with_grads(c, loss), 2e-5);
}

TEST(CpuTrain, BitIdenticalForAnyThreadCount) {
  Step s;
  // 256 rows: several sgemm tiles, attention tiles and row chunks.
  Case c = gpt_case({.batch = 4, .seq = 64, .vocab = 200, .d = 64, .heads = 4, .layers = 2}, &s);
  auto one = c.cpu(s.outs, 1);
  for (int threads : {2, 3, 8}) {
    auto other = c.cpu(s.outs, threads);
    for (size_t k = 0; k < s.outs.size(); ++k)
      EXPECT_TRUE(same_bits(one[k], other[k])) << s.names[k] << " differs between 1 and " << threads << " threads";
  }
}

// The executor fuses pairs of steps (fuse_pairs: gelu-grad and mul, float
// add/sub/mul/div and another, a matmul and its mul by a scalar, a where and
// the softmax of it, a mul and its sum or mean over the last axis, a matmul and
// its bias; a binary pair and the mul by a scalar after it; an elementwise step in a product's tiles, in bf16 the
// round of its output and then an elementwise step reading the rounded output): the same bits as computing them apart,
// which it does when the first one's output is also a graph output. Every kind fires on the gpt step, in f32 and (all
// but the matmul's, whose product is rounded to bf16 before the mul) in bf16. In bf16 too, the rounds of values already
// bf16 that are not run (skip_idempotent_rounds: attention's heads moved by a permute), run where the permutes are
// outputs, and those only bf16 products read (skip_operand_rounds) or made as attention and its backward write
// (fuse_output_rounds), run where they are outputs; and the permutes moving attention's heads back, which attention and
// the backward's products write in their layout instead (fold_head_permutes), run where those are outputs.
TEST(CpuTrain, FusedPairsGiveTheSameBits) {
  using Fuse = CpuExecutor::Fuse;
  // Caches small enough that attention's backward runs head by head (it
  // does only where the scores would not fit in half of L2).
  const CacheSizes small{4 << 10, 8 << 10, 64 << 10};
  set_gemm_caches(&small);
  struct Reset {
    ~Reset() { set_gemm_caches(nullptr); }
  } reset;
  int f32_thens[5] = {};  // by heads
  for (bool bf16 : {false, true}) {
    int folded[2] = {0, 0};
    // d = 64: the plan leaves the backward's dV, dQ or dK alone long enough
    // for a permute after it to be folded, in f32 with 4 heads, in bf16 with
    // either. (2 heads: a transpose of bf16 values made apart, the product
    // of it still the bf16 product: holds_bf16_values.)
    for (int64_t heads : {4, 2}) {
      Step s;
      Case c = gpt_case({.batch = 4, .seq = 16, .vocab = 50, .d = 64, .heads = heads, .layers = 2}, &s, bf16);
      plan::Plan p = plan::make_plan(c.g, s.outs);
      CpuExecutor ex(c.g, p, 2);
      for (Fuse kind : {Fuse::GeluGradMul, Fuse::Binary, Fuse::BinaryScale, Fuse::MatmulScale, Fuse::WhereSoftmax,
                        Fuse::MulReduce, Fuse::MatmulBias, Fuse::AttentionGrad, Fuse::MatmulThen, Fuse::MatmulRound,
                        Fuse::MatmulColumnSum, Fuse::LayerNormGrad}) {
        bool f32_only = kind == Fuse::MatmulScale || kind == Fuse::MatmulBias || kind == Fuse::LayerNormGrad;
        if ((bf16 && f32_only) || (!bf16 && kind == Fuse::MatmulRound)) continue;
        EXPECT_GT(ex.fused(kind), 0) << "kind " << static_cast<int>(kind);
      }
      // Every elementwise step f32 makes in a product, bf16 makes too (after the round).
      if (!bf16) {
        f32_thens[heads] = ex.fused(Fuse::MatmulThen);
      } else {
        EXPECT_EQ(ex.fused(Fuse::MatmulThen), f32_thens[heads]) << heads << " heads";
        EXPECT_GT(ex.skipped_rounds(), 0);
        EXPECT_GT(ex.operand_rounds(), 0);
        EXPECT_GT(ex.output_rounds(), 0);
      }
      for (int kind = 0; kind < 2; ++kind) folded[kind] += ex.folded_permutes(static_cast<CpuExecutor::Folded>(kind));
      std::vector<NodeId> apart = s.outs;
      for (NodeId id = 0; id < static_cast<NodeId>(c.g.size()); ++id) {
        Op op = c.g.node(id).op;
        if (op == Op::GeluGrad || op == Op::Add || op == Op::Sub || op == Op::Mul || op == Op::Div ||
            op == Op::Matmul || op == Op::Where || op == Op::Gelu || op == Op::SumTo || op == Op::Permute ||
            op == Op::Attention || op == Op::RoundBf16)
          apart.push_back(id);
      }
      ASSERT_GT(apart.size(), s.outs.size());
      for (int threads : {1, 3}) {
        auto fused = c.cpu(s.outs, threads);
        auto unfused = c.cpu(apart, threads);
        for (size_t k = 0; k < s.outs.size(); ++k)
          EXPECT_TRUE(same_bits(fused[k], unfused[k]))
              << s.names[k] << " differs with the pairs fused" << (bf16 ? " (bf16)" : "") << ", " << heads << " heads";
      }
    }
    // The permute after attention, and after the backward's dV, dQ or dK.
    for (int kind = 0; kind < 2; ++kind) EXPECT_GT(folded[kind], 0) << kind << (bf16 ? " bf16" : " f32");
  }
}

// The bias gradients made as the weight gradients pack op(B)
// (MatmulColumnSum): each is the sum-to's definition of its input, +0 then
// every row added in order, bit for bit, in f32 and bf16. (Above, the "apart"
// run fuses them too: a graph output does not stop that fusion.)
TEST(CpuTrain, FusedColumnSumsAreTheRowOrderSumsOfTheirInputs) {
  for (bool bf16 : {false, true}) {
    Step s;
    Case c = gpt_case({.batch = 4, .seq = 16, .vocab = 50, .d = 32, .heads = 4, .layers = 2}, &s, bf16);
    std::vector<NodeId> outs = s.outs, sums;
    for (NodeId id = 0; id < static_cast<NodeId>(c.g.size()); ++id) {
      const Node& n = c.g.node(id);
      if (n.op == Op::SumTo && n.shape.rank == 1 && c.g.node(n.inputs[0]).shape.rank >= 2)
        sums.push_back(id), outs.push_back(id), outs.push_back(n.inputs[0]);
    }
    plan::Plan p = plan::make_plan(c.g, outs);
    CpuExecutor ex(c.g, p, 2);
    EXPECT_GT(ex.fused(CpuExecutor::Fuse::MatmulColumnSum), 0) << (bf16 ? "bf16" : "f32");
    auto got = c.cpu(outs, 2);
    for (size_t k = 0; k < sums.size(); ++k) {
      const std::vector<float>&sum = got[s.outs.size() + 2 * k].f, &x = got[s.outs.size() + 2 * k + 1].f;
      std::vector<float> want(sum.size(), 0.0f);
      for (size_t e = 0; e < x.size(); ++e) want[e % want.size()] += x[e];
      EXPECT_EQ(std::memcmp(want.data(), sum.data(), 4 * sum.size()), 0)
          << c.g.node(sums[k]).path << (bf16 ? " (bf16)" : " (f32)");
    }
  }
}

// Every instruction set up to the machine's best against the baseline build of
// the kernels: the same operations element by element, so the same bits.
void expect_same_bits_for_every_isa(Case& c, const Step& s, int threads) {
  Isa best = best_isa();
  set_isa(Isa::Baseline);
  auto base = c.cpu(s.outs, threads);
  for (Isa i : {Isa::Avx2, Isa::Avx512}) {
    if (static_cast<int>(i) > static_cast<int>(best)) break;
    set_isa(i);
    auto other = c.cpu(s.outs, threads);
    for (size_t k = 0; k < s.outs.size(); ++k)
      EXPECT_TRUE(same_bits(base[k], other[k])) << s.names[k] << " differs between baseline and " << isa_name(i);
  }
  set_isa(best);
}

TEST(CpuTrain, BitIdenticalForEveryInstructionSet) {
  std::printf("instruction sets: best %s\n", isa_name(best_isa()));
  Step s;
  Case c = gpt_case({.batch = 4, .seq = 64, .vocab = 200, .d = 64, .heads = 4, .layers = 2}, &s);
  expect_same_bits_for_every_isa(c, s, 2);
}

TEST(CpuTrain, Bf16BitIdenticalForEveryInstructionSetAndThreadCount) {
  Step s;
  Case c = gpt_case({.batch = 4, .seq = 64, .vocab = 200, .d = 64, .heads = 4, .layers = 2}, &s, true);
  expect_same_bits_for_every_isa(c, s, 2);
  auto one = c.cpu(s.outs, 1), three = c.cpu(s.outs, 3);
  for (size_t k = 0; k < s.outs.size(); ++k)
    EXPECT_TRUE(same_bits(one[k], three[k])) << s.names[k] << " differs between 1 and 3 threads";
}

TEST(CpuTrain, ManyOpsBitIdenticalForEveryInstructionSet) {
  Case c;
  Graph& g = c.g;
  NodeId x = c.in({8, 37}), gain = param(g, "gain", {37}, {}), p = param(g, "p", {8, 37}, {});
  std::vector<NodeId> terms = {
      softmax(g, mul(g, p, x)),
      log_softmax(g, p, 0),
      rms_norm(g, p, gain),
      layer_norm(g, p, gain, gain),
      logsumexp(g, p, 0),
      logsumexp(g, p, 1),
      max(g, p, 0),
      sigmoid(g, p),
      silu(g, mul(g, x, p)),
      gelu(g, p),
      tanh(g, p),
      exp(g, x),
      div(g, p, add(g, exp(g, x), scalar(g, 1))),
      mean(g, sqrt(g, add(g, mul(g, p, p), scalar(g, 1))), 0, true),
  };
  NodeId loss = scalar(g, 0);
  for (NodeId t : terms) loss = add(g, loss, mean_all(g, mul(g, t, t)));
  c.fill_params(0.7f);
  expect_same_bits_for_every_isa(c, with_grads(c, loss), 2);
}

}  // namespace
}  // namespace sx::cpu::testing
