// A case per fusion rule of the lowering (lower.h's FusionRule): the rule's
// pattern lowered gives the expected launches, one of them made by the rule,
// and the launches run on the cuda device over the emulated GPU give the
// unfused reference backend's numbers. A guard fails by name for a rule of
// the table that has no case.
#include <gtest/gtest.h>

#include "autodiff/autodiff.h"
#include "backend/cpu/test_util.h"
#include "backend/cuda/lower.h"
#include "graph/precision.h"

namespace sx::cuda {
namespace {

using namespace ops;
using cpu::testing::Case;


using Build = std::vector<NodeId> (*)(Case&);
struct RuleCase {
  FusionRule rule;
  const char* launches;  // the kinds of the launches, in order
  Build build;           // the graph on the case; its outputs
};

NodeId bf16(Case& c, NodeId x) { return round_bf16(c.g, x); }

const RuleCase kCases[] = {
    {FusionRule::InlineConstant, "map",
     [](Case& c) -> std::vector<NodeId> {
       return {mul(c.g, c.in({5, 7}), add(c.g, cast(c.g, arange(c.g, 7), DType::F32), full(c.g, {7}, 0.5)))};
     }},
    {FusionRule::ParamBf16Copy, "gemm",
     [](Case& c) -> std::vector<NodeId> {
       return {matmul(c.g, bf16(c, c.param({6, 5})), bf16(c, c.param({5, 4})))};
     }},
    {FusionRule::ElementwiseChain, "map",
     [](Case& c) -> std::vector<NodeId> {
       return {tanh(c.g, mul(c.g, exp(c.g, c.in({4, 9})), c.in({9})))};
     }},
    {FusionRule::ProducerPrologue, "map",
     [](Case& c) -> std::vector<NodeId> {
       NodeId a = exp(c.g, c.in({4, 9})), b = sin(c.g, c.in({4, 9}));
       return {add(c.g, a, b)};
     }},
    {FusionRule::RowPrologue, "row",
     [](Case& c) -> std::vector<NodeId> {
       return {layer_norm(c.g, add(c.g, c.in({3, 4, 13}), c.in({3, 4, 13})), c.in({13}), c.in({13}))};
     }},
    {FusionRule::RowEpilogue, "row",
     [](Case& c) -> std::vector<NodeId> {
       return {mul(c.g, softmax(c.g, c.in({6, 11})), c.in({6, 1}))};
     }},
    {FusionRule::RowChain, "row",
     [](Case& c) -> std::vector<NodeId> {
       return {softmax(c.g, layer_norm(c.g, c.in({6, 11}), c.in({11}), c.in({11})))};
     }},
    // The loss and its gradient (softmax - onehot) read the logits' rows once.
    {FusionRule::SharedRows, "loss",
     [](Case& c) -> std::vector<NodeId> {
       NodeId loss = cross_entropy(c.g, c.param({3, 5, 17}), c.ids({3, 5}, 17));
       return {loss, backward(c.g, loss).params.at("p0")};
     }},
    {FusionRule::ColumnPrologue, "column",
     [](Case& c) -> std::vector<NodeId> {
       return {sum(c.g, mul(c.g, c.in({6, 11}), c.in({6, 11})), 0)};
     }},
    {FusionRule::SideBySideColumns, "column",
     [](Case& c) -> std::vector<NodeId> {
       NodeId x = c.in({6, 11}), y = c.in({6, 11});
       return {sum_to(c.g, x, Shape{11}), sum_to(c.g, y, Shape{11})};
     }},
    {FusionRule::GemmBias, "gemm",
     [](Case& c) -> std::vector<NodeId> {
       return {add(c.g, matmul(c.g, c.in({2, 6, 5}), c.in({5, 7})), c.in({7}))};
     }},
    {FusionRule::GemmGelu, "gemm",
     [](Case& c) -> std::vector<NodeId> {
       return {gelu(c.g, add(c.g, matmul(c.g, c.in({6, 5}), c.in({5, 7})), c.in({7})))};
     }},
    // d pre = (gy w^T) * gelu'(pre), GELU's backward through a saved pre-activation.
    {FusionRule::GemmDGelu, "gemm",
     [](Case& c) -> std::vector<NodeId> {
       NodeId d = matmul(c.g, c.in({6, 3}), transpose(c.g, c.in({8, 3})));
       return {mul(c.g, d, unary(c.g, Op::GeluGrad, c.in({6, 8})))};
     }},
    {FusionRule::GemmBf16Out, "gemm",
     [](Case& c) -> std::vector<NodeId> {
       return {bf16(c, matmul(c.g, bf16(c, c.param({6, 5})), bf16(c, c.param({5, 7}))))};
     }},
    // A linear layer's backward: d b = the column sums of gy, beside d w = x^T gy (BGRADB).
    {FusionRule::GemmBiasGrad, "gemm",
     [](Case& c) -> std::vector<NodeId> {
       NodeId x = c.in({12, 5}), gy = c.in({12, 7});
       return {sum_to(c.g, gy, Shape{7}), matmul(c.g, transpose(c.g, x), gy)};
     }},
    // q, k and v of one input, each with its bias.
    {FusionRule::SiblingProducts, "gemm map",
     [](Case& c) -> std::vector<NodeId> {
       NodeId x = c.in({2, 6, 5});
       std::vector<NodeId> qkv;
       for (int i = 0; i < 3; ++i) qkv.push_back(add(c.g, matmul(c.g, x, c.in({5, 4})), c.in({4})));
       return {tanh(c.g, add(c.g, mul(c.g, qkv[0], qkv[1]), qkv[2]))};
     }},
    // Heads split by permutes on the way in, joined by one on the way out, rounded for a bf16 product.
    {FusionRule::AttentionLayout, "attention",
     [](Case& c) -> std::vector<NodeId> {
       std::vector<NodeId> qkv;
       for (int i = 0; i < 3; ++i) qkv.push_back(bf16(c, permute(c.g, c.in({2, 9, 3, 4}, -1, 1), {0, 2, 1, 3})));
       NodeId o = bf16(c, attention(c.g, qkv[0], qkv[1], qkv[2], true));
       return {bf16(c, reshape(c.g, permute(c.g, o, {0, 2, 1, 3}), {2, 9, 12}))};
     }},
    {FusionRule::GatherEpilogue, "gather",
     [](Case& c) -> std::vector<NodeId> {
       return {mul(c.g, embed(c.g, c.ids({2, 7}, 11), c.in({11, 6})), c.in({2, 7, 6}))};
     }},
    // The layer norm's output is summed by a column kernel first, then rounded: the rounding joins the row kernel.
    {FusionRule::LateElementwise, "row column",
     [](Case& c) -> std::vector<NodeId> {
       NodeId z = layer_norm(c.g, c.in({6, 11}), c.in({11}), c.in({11}));
       NodeId s = sum(c.g, z, 0);
       return {s, bf16(c, z)};
     }},
};

std::string kinds(const Lowering& l) {
  std::string out;
  for (const Launch& x : l.launches) out += (out.empty() ? "" : " ") + std::string(launch_kind_name(x.kind));
  return out;
}

class Rules : public ::testing::TestWithParam<RuleCase> {};

void PrintTo(const RuleCase& c, std::ostream* os) { *os << fusion_rule_name(c.rule); }

TEST_P(Rules, LowersToTheExpectedLaunchesWithTheNumbersOfTheReference) {
  const RuleCase& rc = GetParam();
  Case c;
  c.g.builtin_taps = false;
  std::vector<NodeId> outs = rc.build(c);
  c.fill_params();
  bool rounded = false;
  for (const Node& n : c.g.nodes()) rounded = rounded || n.op == Op::RoundBf16;
  plan::Plan p = plan::make_plan(c.g, outs);
  Lowering l = lower(c.g, p, rounded ? Precision::bf16 : Precision::f32);
  EXPECT_EQ(kinds(l), rc.launches) << fusion_rule_name(rc.rule);
  bool fired = false;
  for (const Launch& x : l.launches) fired = fired || x.fused_by(rc.rule);
  EXPECT_TRUE(fired) << fusion_rule_name(rc.rule) << " made none of the launches";
  auto want = ref::evaluate<float>(c.g, c.feeds, outs);
  auto got = c.on_device("cuda", outs, 1);
  for (size_t k = 0; k < outs.size(); ++k)
    EXPECT_TRUE(cpu::testing::same_bits(got[k], want[outs[k]]))
        << fusion_rule_name(rc.rule) << ": output " << k << " differs from the reference's bits";
}

INSTANTIATE_TEST_SUITE_P(EveryRule, Rules, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<RuleCase>& info) {
                           std::string n = fusion_rule_name(info.param.rule);
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

TEST(RulesGuard, EveryFusionRuleHasACase) {
  for (const FusionRuleInfo& info : fusion_rules()) {
    bool found = false;
    for (const RuleCase& c : kCases) found = found || c.rule == info.rule;
    EXPECT_TRUE(found) << "fusion rule " << info.name << " has no case in lower_rules_test";
  }
  EXPECT_EQ(fusion_rules().size(), static_cast<size_t>(FusionRule::LateElementwise) + 1)
      << "a rule of the enum is missing from fusion_rules()";
}

}  // namespace
}  // namespace sx::cuda
