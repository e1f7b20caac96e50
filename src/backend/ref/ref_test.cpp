#include "backend/ref/ref.h"

#include <gtest/gtest.h>

#include <cmath>

#include "graph/build.h"
#include "graph/philox.h"

namespace sx::ref {
namespace {

using namespace ops;
using V = std::vector<double>;

// A graph with fed inputs, evaluated in T.
template <typename T = double>
struct Case {
  Graph g;
  Feeds<T> feeds;
  NodeId in(const Shape& s, const V& values) {
    std::string name = "in" + std::to_string(feeds.inputs.size());
    feeds.inputs[name] = Tensor<T>::of(s, std::vector<T>(values.begin(), values.end()));
    return input(g, name, s.vec(), DType::F32);
  }
  NodeId ids(const Shape& s, const std::vector<int32_t>& values) {
    std::string name = "in" + std::to_string(feeds.inputs.size());
    feeds.inputs[name] = Tensor<T>::ints(s, values);
    return input(g, name, s.vec(), DType::I32);
  }
  Tensor<T> run(NodeId id) { return evaluate(g, feeds, {id})[id]; }
  V vals(NodeId id) {
    Tensor<T> t = run(id);
    V out;
    for (int64_t k = 0; k < t.numel(); ++k) out.push_back(t.get(k));
    return out;
  }
};

void expect_near(const V& got, const V& want, double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], want[k], tol) << "element " << k;
}

TEST(Ref, Unary) {
  Case c;
  NodeId x = c.in({3}, {-1.0, 0.5, 2.0});
  NodeId p = c.in({2}, {1.0, 4.0});
  expect_near(c.vals(neg(c.g, x)), {1, -0.5, -2});
  expect_near(c.vals(exp(c.g, x)), {std::exp(-1.0), std::exp(0.5), std::exp(2.0)});
  expect_near(c.vals(log(c.g, p)), {0, std::log(4.0)});
  expect_near(c.vals(sqrt(c.g, p)), {1, 2});
  expect_near(c.vals(rsqrt(c.g, p)), {1, 0.5});
  expect_near(c.vals(sin(c.g, x)), {std::sin(-1.0), std::sin(0.5), std::sin(2.0)});
  expect_near(c.vals(cos(c.g, x)), {std::cos(-1.0), std::cos(0.5), std::cos(2.0)});
  expect_near(c.vals(tanh(c.g, x)), {std::tanh(-1.0), std::tanh(0.5), std::tanh(2.0)});
  expect_near(c.vals(sigmoid(c.g, p)), {0.7310585786300049, 0.9820137900379085});
  expect_near(c.vals(relu(c.g, x)), {0, 0.5, 2});
  // GPT-2's tanh approximation, not the erf GELU (0.8413447460685429 at 1).
  expect_near(c.vals(gelu(c.g, p)), {0.8411919906082768, 3.9999297540518075});
  expect_near(c.vals(silu(c.g, p)), {0.7310585786300049, 3.928055160151634});
  expect_near(c.vals(abs(c.g, x)), {1, 0.5, 2});
  expect_near(c.vals(sign(c.g, x)), {-1, 1, 1});
}

TEST(Ref, BinaryBroadcasts) {
  Case c;
  NodeId a = c.in({2, 3}, {1, 2, 3, 4, 5, 6});
  NodeId row = c.in({3}, {10, 20, 30});
  NodeId col = c.in({2, 1}, {1, 2});
  expect_near(c.vals(add(c.g, a, row)), {11, 22, 33, 14, 25, 36});
  expect_near(c.vals(sub(c.g, col, row)), {-9, -19, -29, -8, -18, -28});
  expect_near(c.vals(mul(c.g, a, col)), {1, 2, 3, 8, 10, 12});
  expect_near(c.vals(div(c.g, a, col)), {1, 2, 3, 2, 2.5, 3});
  expect_near(c.vals(pow(c.g, col, row)), {1, 1, 1, 1024, 1048576, 1073741824});
  NodeId b = c.in({3}, {2, 2, 2});
  expect_near(c.vals(maximum(c.g, a, b)), {2, 2, 3, 4, 5, 6});
  expect_near(c.vals(minimum(c.g, a, b)), {1, 2, 2, 2, 2, 2});
  expect_near(c.vals(lt(c.g, a, b)), {1, 0, 0, 0, 0, 0});
  expect_near(c.vals(le(c.g, a, b)), {1, 1, 0, 0, 0, 0});
  expect_near(c.vals(gt(c.g, a, b)), {0, 0, 1, 1, 1, 1});
  expect_near(c.vals(ge(c.g, a, b)), {0, 1, 1, 1, 1, 1});
  expect_near(c.vals(eq(c.g, a, b)), {0, 1, 0, 0, 0, 0});
  expect_near(c.vals(ne(c.g, a, b)), {1, 0, 1, 1, 1, 1});
  // cond [2,1] picks a row of a or of row
  NodeId cond = gt(c.g, col, scalar(c.g, 1.5));
  expect_near(c.vals(where(c.g, cond, a, row)), {10, 20, 30, 4, 5, 6});
}

TEST(Ref, IntegersCastsAndBf16) {
  Case c;
  NodeId i = c.ids({3}, {1, -2, 7});
  NodeId j = c.ids({1}, {3});
  expect_near(c.vals(add(c.g, i, j)), {4, 1, 10});
  expect_near(c.vals(mul(c.g, i, j)), {3, -6, 21});
  expect_near(c.vals(neg(c.g, i)), {-1, 2, -7});
  NodeId f = c.in({4}, {-1.7, 0.2, 2.9, 0.0});
  expect_near(c.vals(cast(c.g, f, DType::I32)), {-1, 0, 2, 0});
  expect_near(c.vals(cast(c.g, f, DType::Bool)), {1, 1, 1, 0});
  expect_near(c.vals(cast(c.g, i, DType::F32)), {1, -2, 7});
  // bf16 keeps 8 bits of mantissa and rounds halfway cases to even.
  NodeId h = c.in({3}, {1.00390625, 1.01171875, 3.0});
  expect_near(c.vals(cast(c.g, h, DType::BF16)), {1.0, 1.015625, 3.0});
  expect_near(c.vals(arange(c.g, 4)), {0, 1, 2, 3});
  expect_near(c.vals(full(c.g, {2}, 2.5)), {2.5, 2.5});
}

TEST(Ref, MatmulBatchedAndBroadcast) {
  Case c;
  NodeId a = c.in({2, 3}, {1, 2, 3, 4, 5, 6});
  NodeId b = c.in({3, 2}, {7, 8, 9, 10, 11, 12});
  expect_near(c.vals(matmul(c.g, a, b)), {58, 64, 139, 154});
  NodeId ba = c.in({2, 1, 2}, {1, 2, 3, 4});
  NodeId bb = c.in({2, 1}, {10, 1});
  expect_near(c.vals(matmul(c.g, ba, bb)), {12, 34});
}

TEST(Ref, Reductions) {
  Case c;
  NodeId x = c.in({2, 3}, {1, 5, 2, 7, 7, -1});
  expect_near(c.vals(sum(c.g, x, 0)), {8, 12, 1});
  expect_near(c.vals(sum(c.g, x, 1, true)), {8, 13});
  EXPECT_EQ(c.run(sum(c.g, x, 1, true)).shape, (Shape{2, 1}));
  expect_near(c.vals(mean(c.g, x, -1)), {8 / 3.0, 13 / 3.0});
  expect_near(c.vals(max(c.g, x, 1)), {5, 7});
  expect_near(c.vals(argmax(c.g, x, 1)), {1, 0});  // the first of equal maxima
  expect_near(c.vals(logsumexp(c.g, x, 0)),
              {std::log(std::exp(1) + std::exp(7)), std::log(std::exp(5) + std::exp(7)),
               std::log(std::exp(2) + std::exp(-1))});
  expect_near(c.vals(sum_all(c.g, x)), {21});
  expect_near(c.vals(mean_all(c.g, x)), {3.5});
}

TEST(Ref, ShapeOps) {
  Case c;
  // x[i][j][k] = 100 i + 10 j + k, shape [2,3,4]
  V v;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) v.push_back(100 * i + 10 * j + k);
  NodeId x = c.in({2, 3, 4}, v);
  Tensor<double> p = c.run(permute(c.g, x, {2, 0, 1}));  // p[k][i][j]
  EXPECT_EQ(p.shape, (Shape{4, 2, 3}));
  EXPECT_EQ(p.f[(3 * 2 + 1) * 3 + 2], 123);
  Tensor<double> t = c.run(transpose(c.g, x));  // t[i][k][j]
  EXPECT_EQ(t.f[(1 * 4 + 2) * 3 + 1], 112);
  expect_near(c.vals(slice(c.g, x, 1, 1, 2)), {10, 11, 12, 13, 110, 111, 112, 113});
  // transpose -> slice -> permute, checked element by element
  NodeId chain = permute(c.g, slice(c.g, transpose(c.g, x), 1, 1, 3), {1, 2, 0});  // [k in 1..3][j][i]
  V want;
  for (int k = 1; k < 3; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) want.push_back(100 * i + 10 * j + k);
  expect_near(c.vals(chain), want);
  NodeId a = c.in({2, 1}, {1, 2});
  NodeId b = c.in({2, 2}, {3, 4, 5, 6});
  expect_near(c.vals(concat(c.g, {a, b, a}, 1)), {1, 3, 4, 1, 2, 5, 6, 2});
  auto parts = split(c.g, b, {1, 1}, 0);
  expect_near(c.vals(parts[1]), {5, 6});
  expect_near(c.vals(reshape(c.g, b, {4})), {3, 4, 5, 6});
  expect_near(c.vals(expand(c.g, a, Shape{2, 3})), {1, 1, 1, 2, 2, 2});
  expect_near(c.vals(sum_to(c.g, b, Shape{2})), {8, 10});
  expect_near(c.vals(sum_to(c.g, b, Shape{2, 1})), {7, 11});
  expect_near(c.vals(pad(c.g, a, 1, 1, 2)), {0, 1, 0, 0, 0, 2, 0, 0});
  NodeId ids = c.ids({3}, {1, 0, 1});
  expect_near(c.vals(gather(c.g, b, ids, 1)), {4, 3, 4, 6, 5, 6});
  expect_near(c.vals(gather(c.g, b, reshape(c.g, ids, {3, 1}), 0)), {5, 6, 3, 4, 5, 6});
  NodeId src = c.in({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_near(c.vals(scatter_add(c.g, src, ids, 1, 3)), {2, 4, 0, 5, 10, 0});
}

TEST(Ref, SoftmaxAndNorms) {
  Case c;
  NodeId x = c.in({2, 2}, {0, std::log(3.0), 1, 1});
  expect_near(c.vals(softmax(c.g, x)), {0.25, 0.75, 0.5, 0.5});
  expect_near(c.vals(softmax(c.g, x, 0)), {1 / (1 + std::exp(1)), 3 / (3 + std::exp(1)),
                                           std::exp(1) / (1 + std::exp(1)), std::exp(1) / (3 + std::exp(1))});
  expect_near(c.vals(log_softmax(c.g, x)), {std::log(0.25), std::log(0.75), std::log(0.5), std::log(0.5)});
  NodeId y = c.in({3}, {1, 2, 3});
  NodeId gain = c.in({3}, {1, 2, 1});
  NodeId bias = c.in({3}, {0, 0, 1});
  double r = 1 / std::sqrt(2.0 / 3 + 1e-5);
  expect_near(c.vals(layer_norm(c.g, y, gain, bias)), {-r, 0, r + 1});
  double q = 1 / std::sqrt(14.0 / 3 + 1e-5);
  expect_near(c.vals(rms_norm(c.g, y, gain)), {q, 4 * q, 3 * q});
}

TEST(Ref, AttentionCausalAndAsComposition) {
  Case c;
  c.g.builtin_taps = false;
  NodeId q = c.in({2, 1}, {0, 0});
  NodeId v = c.in({2, 2}, {1, 2, 3, 4});
  expect_near(c.vals(attention(c.g, q, q, v, true)), {1, 2, 2, 3});
  expect_near(c.vals(attention(c.g, q, q, v, false)), {2, 3, 2, 3});
  // Against softmax(q k^T / sqrt(d)) v built from primitives, with batch dims and tq < tk.
  V qv, kv, vv;
  for (int i = 0; i < 2 * 3 * 4; ++i) qv.push_back(std::sin(i * 1.3));
  for (int i = 0; i < 2 * 5 * 4; ++i) kv.push_back(std::cos(i * 0.7));
  for (int i = 0; i < 2 * 5 * 2; ++i) vv.push_back(std::sin(i * 0.4 + 1));
  NodeId Q = c.in({2, 3, 4}, qv), K = c.in({2, 5, 4}, kv), Vv = c.in({2, 5, 2}, vv);
  for (bool causal : {false, true}) {
    NodeId fused = attention(c.g, Q, K, Vv, causal);
    NodeId composed = matmul(c.g, attention_weights(c.g, Q, K, causal, 0.5), Vv);
    expect_near(c.vals(fused), c.vals(composed), 1e-12);
  }
}

TEST(Ref, EmbedCrossEntropyAccuracy) {
  Case c;
  c.g.builtin_taps = false;
  NodeId table = c.in({3, 2}, {1, 2, 3, 4, 5, 6});
  NodeId ids = c.ids({2, 2}, {2, 0, 1, 1});
  expect_near(c.vals(embed(c.g, ids, table)), {5, 6, 1, 2, 3, 4, 3, 4});
  NodeId logits = c.in({2, 2}, {0, 0, 2, 1});
  NodeId t = c.ids({2}, {0, 0});
  double want = (std::log(2.0) + std::log(1 + std::exp(-1.0))) / 2;
  expect_near(c.vals(cross_entropy(c.g, logits, t)), {want});
  expect_near(c.vals(accuracy(c.g, logits, t)), {1.0});  // row 0 ties: argmax picks 0
  NodeId bad = c.ids({2}, {0, 2});
  try {
    c.run(cross_entropy(c.g, logits, bad));
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), Code::SHAPE_012);
  }
  NodeId oob = c.ids({1}, {3});
  EXPECT_THROW(c.run(embed(c.g, oob, table)), UserError);
  EXPECT_THROW(c.run(gather(c.g, table, oob, 0)), UserError);
}

TEST(Ref, DropoutIsPhiloxKeyed) {
  Case c;
  V ones(64, 1.0);
  NodeId x = c.in({8, 8}, ones);
  NodeId d = dropout(c.g, x, 0.25, 42, 3);
  c.feeds.rng_offset = 9;
  V a = c.vals(d);
  for (size_t e = 0; e < a.size(); ++e) EXPECT_EQ(a[e], philox::keep(42, 3, 9, e, 0.25) ? 1 / 0.75 : 0.0);
  EXPECT_EQ(c.vals(d), a);
  c.feeds.rng_offset = 10;
  EXPECT_NE(c.vals(d), a);
  EXPECT_EQ(dropout(c.g, x, 0.0, 42, 3), x);
}

TEST(Ref, ControlAndPartialEvaluation) {
  Case c;
  NodeId x = c.in({2}, {1, 3});
  NodeId m = mean_all(c.g, x);
  NodeId t = tap(c.g, "x/mean", m);
  NodeId unused = exp(c.g, x);
  auto all = evaluate(c.g, c.feeds, {t});
  EXPECT_EQ(all[t].f, std::vector<double>{2});
  EXPECT_TRUE(all[unused].f.empty());  // not needed, not computed
  expect_near(c.vals(stop_gradient(c.g, x)), {1, 3});
}

TEST(Ref, Float32IsTheSameOpsRounded) {
  Case<float> c;
  NodeId x = c.in({3}, {0.1, 0.2, 0.3});
  Tensor<float> s = c.run(softmax(c.g, x));
  float total = s.f[0] + s.f[1] + s.f[2];
  EXPECT_NEAR(total, 1.0f, 1e-6f);
  EXPECT_EQ(c.run(add(c.g, x, x)).f[0], 0.2f);
}

TEST(Ref, InitParamIsDeterministicAndScaled) {
  Graph g;
  NodeId w = param(g, "w", {100, 100}, {Init::Normal, 0.02});
  Tensor<double> a = init_param<double>(g.node(w), 1, 7), b = init_param<double>(g.node(w), 1, 7);
  EXPECT_EQ(a.f, b.f);
  double s2 = 0;
  for (double v : a.f) s2 += v * v;
  EXPECT_NEAR(std::sqrt(s2 / a.f.size()), 0.02, 0.001);
  NodeId o = param(g, "o", {3}, {Init::Ones});
  EXPECT_EQ(init_param<float>(g.node(o), 1, 0).f, (std::vector<float>{1, 1, 1}));
}

}  // namespace
}  // namespace sx::ref
