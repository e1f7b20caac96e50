// End-to-end gradient checks of small models, and autodiff's own contract.
#include "testing/gradcheck.h"
#include "backend/ref/kernels.h"

namespace sx::gradcheck {
namespace {

using namespace ops;

// x·w + b with w [in, out] and b [out], as std/nn's linear.
NodeId linear(GradCheck& c, NodeId x, int64_t in, int64_t out) {
  return add(c.g, matmul(c.g, x, c.operand({in, out}, -0.5, 0.5)), c.operand({out}, -0.1, 0.1));
}

NodeId norm(GradCheck& c, NodeId x, int64_t d) {
  return layer_norm(c.g, x, c.operand({d}, 0.8, 1.2), c.operand({d}, -0.1, 0.1));
}

TEST(Model, MlpGradients) {
  GradCheck c;
  NodeId x = c.constant({4, 3});
  NodeId h = gelu(c.g, linear(c, x, 3, 5));
  NodeId logits = linear(c, h, 5, 2);
  c.check(cross_entropy(c.g, logits, c.ids({4}, 2)));
}

// One pre-norm GPT block as std/nn builds it: embeddings, causal multi-head
// attention, a GELU MLP, final norm and an untied head; returns the loss.
NodeId gpt_block(GradCheck& c) {
  const int64_t B = 2, T = 4, D = 8, H = 2, V = 7;
  NodeId tokens = c.ids({B, T}, V);
  NodeId x = add(c.g, embed(c.g, tokens, c.operand({V, D})), c.operand({T, D}));
  NodeId a = norm(c, x, D);
  auto heads = [&](NodeId t) { return permute(c.g, reshape(c.g, t, {B, T, H, D / H}), {0, 2, 1, 3}); };
  NodeId q = heads(linear(c, a, D, D)), k = heads(linear(c, a, D, D)), v = heads(linear(c, a, D, D));
  NodeId att = reshape(c.g, permute(c.g, attention(c.g, q, k, v, true), {0, 2, 1, 3}), {B, T, D});
  x = add(c.g, x, linear(c, att, D, D));
  NodeId m = linear(c, gelu(c.g, linear(c, norm(c, x, D), D, 4 * D)), 4 * D, D);
  x = add(c.g, x, m);
  NodeId logits = matmul(c.g, norm(c, x, D), c.operand({D, V}, -0.5, 0.5));
  return cross_entropy(c.g, logits, c.ids({B, T}, V));
}

TEST(Model, AttentionBlockGradients) {
  GradCheck c;
  c.g.builtin_taps = true;  // the taps hang off the graph without disturbing the gradients
  c.check(gpt_block(c));
}

// The reference backend in float32 agrees with float64 to float32 rounding,
// for the loss and for every gradient.
TEST(Model, Float32MatchesFloat64) {
  GradCheck c;
  NodeId loss = gpt_block(c);
  Gradients grads = backward(c.g, loss);
  ref::Feeds<float> f32;
  for (const auto& [k, t] : c.feeds.params)
    f32.params[k] = ref::Tensor<float>::of(t.shape, std::vector<float>(t.f.begin(), t.f.end()));
  for (const auto& [k, t] : c.feeds.inputs)
    f32.inputs[k] = ref::Tensor<float>{t.dtype, t.shape, std::vector<float>(t.f.begin(), t.f.end()), t.i};
  auto lo = ref::evaluate(c.g, f32);
  auto hi = ref::evaluate(c.g, c.feeds);
  EXPECT_NEAR(lo[loss].f[0], hi[loss].f[0], 1e-5 * std::abs(hi[loss].f[0]));
  for (const auto& [path, id] : grads.params)
    for (size_t k = 0; k < hi[id].f.size(); ++k)
      EXPECT_NEAR(lo[id].f[k], hi[id].f[k], 1e-5 + 1e-4 * std::abs(hi[id].f[k])) << path << "[" << k << "]";
}

TEST(Autodiff, StopGradientBlocksAndUnusedParamsGetZeros) {
  GradCheck c;
  NodeId p = c.operand({3});
  NodeId unused = c.operand({2});
  NodeId loss = sum_all(c.g, mul(c.g, stop_gradient(c.g, p), p));  // d/dp = stop(p) = p
  Gradients gr = backward(c.g, loss);
  auto vals = ref::evaluate(c.g, c.feeds);
  EXPECT_EQ(vals[gr.params.at("p0")].f, c.feeds.params["p0"].f);
  EXPECT_EQ(vals[gr.params.at("p1")].f, (std::vector<double>{0, 0}));
  (void)unused;
}

TEST(Autodiff, ParamUsedTwiceAccumulates) {
  GradCheck c;
  NodeId p = c.operand({2, 2});
  c.check(add(c.g, matmul(c.g, p, p), tanh(c.g, p)));
}

TEST(Autodiff, LossMustBeAFloatScalar) {
  GradCheck c;
  NodeId p = c.operand({3});
  try {
    backward(c.g, p);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), Code::SHAPE_010);
  }
  try {
    backward(c.g, argmax(c.g, p, 0));
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), Code::SHAPE_005);
  }
}

TEST(Autodiff, BackwardNodesCarryTheForwardPathAndSpan) {
  GradCheck c;
  NodeId p = c.operand({3});
  c.g.scope = "blocks.0.mlp";
  Span at{0, 1, 2, 7, 3};
  NodeId y = sum_all(c.g, gelu(c.g, p, at));
  c.g.scope = "";
  size_t before = c.g.size();
  backward(c.g, y);
  bool found = false;
  for (size_t id = before; id < c.g.size(); ++id) {
    const Node& n = c.g.node(static_cast<NodeId>(id));
    if (n.op == Op::GeluGrad) {
      found = true;
      EXPECT_EQ(n.path, "blocks.0.mlp");
      EXPECT_EQ(n.span.line, 7u);
    }
  }
  EXPECT_TRUE(found);
}

// round-bf16's rule: straight through, with the gradient itself rounded
// (d/dp sum(round(p) * c) is round(c), not 0 and not c).
TEST(Bf16Rounding, GradientIsRoundedStraightThrough) {
  GradCheck c;
  NodeId p = c.operand({5});
  std::vector<double> cv = {1.0 / 3, -2.7182818, 1 + 1.0 / 256 + 1e-6, 0.1, 1 + 1.0 / 256};
  c.feeds.inputs["c"] = ref::Tensor<double>::of(Shape{5}, cv);
  NodeId k = input(c.g, "c", {5}, DType::F32);
  NodeId loss = sum_all(c.g, mul(c.g, round_bf16(c.g, p), k));
  Gradients gr = backward(c.g, loss);
  auto vals = ref::evaluate(c.g, c.feeds);
  const auto& got = vals[gr.params.at("p0")].f;
  ASSERT_EQ(got.size(), cv.size());
  for (size_t e = 0; e < cv.size(); ++e) {
    EXPECT_EQ(got[e], ref::round_bf16(cv[e])) << "element " << e;
    EXPECT_NE(got[e], cv[e]) << "element " << e << " was not rounded";
  }
  EXPECT_EQ(got[4], 1.0);  // a tie, to even
}

}  // namespace
}  // namespace sx::gradcheck
