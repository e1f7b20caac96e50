// :precision bf16's rounding pass (graph/precision.h): where it puts
// round-bf16 nodes, and what it leaves alone.
#include "graph/precision.h"

#include <gtest/gtest.h>

#include "graph/build.h"

namespace sx {
namespace {

using namespace ops;

bool is_round(const Graph& g, NodeId id) { return g.node(id).op == Op::RoundBf16; }

TEST(Bf16Rounding, ProductsReadAndWriteRoundedValues) {
  Graph g;
  g.builtin_taps = true;
  NodeId x = input(g, "x", {2, 4, 8}, DType::F32);
  g.scope = "fc";
  NodeId w = param(g, "fc.w", {8, 8}, {});
  NodeId h = add(g, matmul(g, x, w), param(g, "fc.b", {8}, {}));
  g.scope = "";
  NodeId o = attention(g, h, h, gelu(g, h), true);
  NodeId loss = mean_all(g, mul(g, o, o));

  std::vector<NodeId> map;
  Graph r = round_products_bf16(g, {loss}, &map);
  ASSERT_EQ(map.size(), g.size());
  // Each matmul and attention the loss needs reads round-bf16 nodes and is
  // read through one; the product inside attention's diagnostic taps
  // (q·kᵀ of the unrounded q and k) stays f32.
  int rounded = 0, f32 = 0;
  for (NodeId id = 0; id < r.size(); ++id) {
    const Node& n = r.node(id);
    if (n.op != Op::Matmul && n.op != Op::Attention) continue;
    bool all = true, none = true;
    for (NodeId in : n.inputs) all = all && is_round(r, in), none = none && !is_round(r, in);
    EXPECT_TRUE(all || none) << op_name(n.op) << " has some operands rounded";
    rounded += all, f32 += none;
    if (none) EXPECT_EQ(r.node(n.inputs[0]).op, Op::StopGradient);
  }
  EXPECT_EQ(rounded, 2);
  EXPECT_EQ(f32, 1);
  // All the matmul feeds is its bias add: the sum is rounded, after the bias
  // (a GEMM epilogue's, PyTorch's bf16 linear's), not the bare product.
  NodeId mm = g.node(h).inputs[0];
  EXPECT_EQ(r.node(map[mm]).op, Op::Matmul);
  EXPECT_TRUE(is_round(r, map[h]));
  EXPECT_EQ(r.node(r.node(map[h]).inputs[0]).op, Op::Add);
  EXPECT_TRUE(is_round(r, map[o]));
  // The weight's round node is the param's f32 master copy, rounded where it is used.
  const Node& prod = r.node(map[mm]);
  EXPECT_EQ(r.node(r.node(prod.inputs[1]).inputs[0]).op, Op::Param);
  EXPECT_EQ(r.node(prod.inputs[1]).path, "fc.w");
  // h feeds attention twice (q and k): its one rounded copy, so one gradient to round.
  const Node& att = r.node(r.node(map[o]).inputs[0]);
  EXPECT_EQ(att.inputs[0], att.inputs[1]);
  EXPECT_EQ(att.inputs[0], map[h]);
  // What is not a product stays as it was: gelu, the loss.
  EXPECT_EQ(r.node(map[loss]).op, Op::Mean);
  EXPECT_EQ(r.node(map[loss]).dtype, DType::F32);
  int rounds = 0;
  for (const Node& n : r.nodes()) rounds += n.op == Op::RoundBf16;
  EXPECT_EQ(rounds, 5);  // x, w, h after its bias, gelu(h), attention's output
  EXPECT_EQ(r.size(), g.size() + rounds);
  // Params and inputs are found by name as before; every value's dtype is unchanged.
  EXPECT_EQ(r.params().size(), g.params().size());
  EXPECT_NE(r.find_input("x"), kNoNode);
  for (NodeId id = 0; id < g.size(); ++id) EXPECT_EQ(r.node(map[id]).dtype, g.node(id).dtype);
  EXPECT_EQ(r.builtin_taps, g.builtin_taps);
}

// A product read by anything besides its bias add (here a second reader) is
// rounded as it comes out, before the bias.
TEST(Bf16Rounding, AProductReadTwiceIsRoundedBeforeItsBias) {
  Graph g;
  NodeId x = input(g, "x", {2, 8}, DType::F32);
  NodeId mm = matmul(g, x, param(g, "w", {8, 8}, {}));
  NodeId h = add(g, mm, param(g, "b", {8}, {}));
  NodeId loss = mean_all(g, mul(g, h, mm));
  std::vector<NodeId> map;
  Graph r = round_products_bf16(g, {loss}, &map);
  EXPECT_TRUE(is_round(r, map[mm]));
  EXPECT_EQ(r.node(map[h]).op, Op::Add);
  EXPECT_EQ(r.node(map[h]).inputs[0], map[mm]);
}

TEST(Bf16Rounding, AGraphWithoutProductsIsUnchanged) {
  Graph g;
  NodeId x = input(g, "x", {4, 8}, DType::F32);
  mean_all(g, layer_norm(g, x, param(g, "g", {8}, {}), param(g, "b", {8}, {})));
  std::vector<NodeId> map;
  Graph r = round_products_bf16(g, {static_cast<NodeId>(g.size() - 1)}, &map);
  EXPECT_EQ(dump(r), dump(g));
}

}  // namespace
}  // namespace sx
