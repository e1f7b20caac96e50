#include <gtest/gtest.h>

#include "graph/build.h"
#include "graph/philox.h"
#include "util/error.h"

namespace sx {
namespace {

using namespace ops;

// Runs `stmt`, which must throw a UserError with `code`; returns its message.
#define EXPECT_CODE(stmt, want)                                           \
  [&] {                                                                   \
    try {                                                                 \
      stmt;                                                               \
    } catch (const UserError& e) {                                        \
      EXPECT_EQ(code_info(e.code()).name, std::string(want)) << e.what(); \
      return std::string(e.what());                                       \
    }                                                                     \
    ADD_FAILURE() << "expected " << want << " from " #stmt;               \
    return std::string();                                                 \
  }()

TEST(Ops, TablesComeFromOneList) {
  EXPECT_STREQ(op_name(Op::LayerNorm), "layer-norm");
  EXPECT_EQ(op_arity(Op::Where), 3);
  EXPECT_EQ(op_arity(Op::Concat), -1);
  EXPECT_EQ(op_kind(Op::Matmul), OpKind::Matrix);
  Op op;
  ASSERT_TRUE(find_op("cross-entropy", &op));
  EXPECT_EQ(op, Op::CrossEntropy);
  EXPECT_FALSE(find_op("nope", &op));
}

TEST(Build, ShapesOfElementwiseAndMatmul) {
  Graph g;
  NodeId a = input(g, "a", {8, 16, 32}, DType::F32);
  NodeId b = input(g, "b", {32}, DType::F32);
  EXPECT_EQ(g.node(add(g, a, b)).shape, (Shape{8, 16, 32}));
  NodeId w = input(g, "w", {32, 4}, DType::F32);
  EXPECT_EQ(g.node(matmul(g, a, w)).shape, (Shape{8, 16, 4}));
  NodeId bw = input(g, "bw", {1, 32, 5}, DType::F32);
  EXPECT_EQ(g.node(matmul(g, a, bw)).shape, (Shape{8, 16, 5}));
  EXPECT_EQ(g.node(lt(g, a, b)).dtype, DType::Bool);
  EXPECT_EQ(g.node(sum(g, a, -1, true)).shape, (Shape{8, 16, 1}));
  EXPECT_EQ(g.node(mean(g, a, 1)).shape, (Shape{8, 32}));
  EXPECT_EQ(g.node(argmax(g, a, -1)).dtype, DType::I32);
  EXPECT_EQ(g.node(sum_all(g, a)).shape, Shape{});
}

TEST(Build, BroadcastErrorNamesBothShapesAndSuggestsAReshape) {
  Graph g;
  NodeId a = input(g, "a", {8, 16, 32}, DType::F32);
  NodeId b = input(g, "b", {8, 32}, DType::F32);
  try {
    add(g, a, b);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), Code::SHAPE_001);
    EXPECT_EQ(e.diagnostics()[0].message, "expected shapes that broadcast, found [8,16,32] and [8,32]");
    EXPECT_EQ(e.diagnostics()[0].help, "reshape the [8,32] operand to [8,1,32] to broadcast it");
  }
}

TEST(Build, ShapeErrorsHaveTheirCodes) {
  Graph g;
  NodeId x = input(g, "x", {4, 6}, DType::F32);
  NodeId y = input(g, "y", {5, 6}, DType::F32);
  NodeId ids = input(g, "ids", {4}, DType::I32);
  NodeId v = input(g, "v", {6}, DType::F32);
  EXPECT_CODE(mul(g, x, y), "E-SHAPE-001");
  std::string m = EXPECT_CODE(matmul(g, x, y), "E-SHAPE-002");
  EXPECT_NE(m.find("[4,6] and [5,6]"), std::string::npos);
  EXPECT_CODE(matmul(g, x, v), "E-SHAPE-002");
  EXPECT_CODE(sum(g, x, 2), "E-SHAPE-003");
  EXPECT_CODE(softmax(g, x, -3), "E-SHAPE-003");
  EXPECT_CODE(reshape(g, x, {5, -1}), "E-SHAPE-004");
  EXPECT_CODE(reshape(g, x, {-1, -1}), "E-SHAPE-004");
  EXPECT_CODE(reshape(g, x, {3, 7}), "E-SHAPE-004");
  EXPECT_CODE(full(g, {2, -3}, 0.0), "E-SHAPE-004");
  EXPECT_CODE(add(g, x, ids), "E-SHAPE-005");
  EXPECT_CODE(exp(g, ids), "E-SHAPE-005");
  EXPECT_CODE(embed(g, x, y), "E-SHAPE-005");
  EXPECT_CODE(where(g, x, x, x), "E-SHAPE-005");
  EXPECT_CODE(reshape(g, x, {1, 1, 1, 1, 1, 1, 1, 4, 6}), "E-SHAPE-006");
  EXPECT_CODE(input(g, "big", {1, 1, 1, 1, 1, 1, 1, 1, 1}, DType::F32), "E-SHAPE-006");
  EXPECT_CODE(slice(g, x, 1, 2, 7), "E-SHAPE-008");
  EXPECT_CODE(split(g, x, {2, 3}, 1), "E-SHAPE-008");
  EXPECT_CODE(split_n(g, x, 4, 1), "E-SHAPE-008");
  EXPECT_CODE(concat(g, {x, v}, 0), "E-SHAPE-009");
  EXPECT_CODE(layer_norm(g, x, v, ids), "E-SHAPE-005");
  EXPECT_CODE(layer_norm(g, x, y, v), "E-SHAPE-009");
  EXPECT_CODE(cross_entropy(g, x, reshape(g, ids, {2, 2})), "E-SHAPE-009");
  EXPECT_CODE(attention(g, x, y, x, false), "E-SHAPE-009");
  EXPECT_CODE(attention(g, x, v, v, false), "E-SHAPE-009");
  EXPECT_CODE(tap(g, "t", x), "E-SHAPE-010");
  EXPECT_CODE(permute(g, x, {0, 0}), "E-SHAPE-011");
  EXPECT_CODE(transpose(g, v), "E-SHAPE-011");
  EXPECT_CODE(dropout(g, x, 1.0, 1, 0), "E-SHAPE-014");
  EXPECT_CODE(layer_norm(g, x, v, v, 0.0), "E-SHAPE-014");
  EXPECT_CODE(arange(g, -1), "E-SHAPE-014");
  NodeId table = input(g, "table", {10, 3}, DType::F32);
  EXPECT_CODE(check_vocab(g, table, 12), "E-SHAPE-013");
  check_vocab(g, table, 10);
}

TEST(Build, SecondParamAtOnePathNamesBothPositions) {
  int file = Sources::global().add("m.sx", "m.sx", "(param \"w\" [2])\n(param \"w\" [2])\n");
  Span first{file, 0, 16, 1, 1}, second{file, 17, 33, 2, 1};
  Graph g;
  NodeId w = param(g, "blocks.0.w", {2}, {Init::Normal, 0.02}, first);
  EXPECT_EQ(g.find_param("blocks.0.w"), w);
  try {
    param(g, "blocks.0.w", {2}, {}, second);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), Code::SHAPE_007);
    EXPECT_EQ(e.diagnostics()[0].span.line, 2u);
    ASSERT_EQ(e.diagnostics()[0].notes.size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].notes[0], "first made at m.sx:1:1");
    EXPECT_NE(render(e.diagnostics()[0]).find("E-SHAPE-007"), std::string::npos);
  }
}

TEST(Build, NodesCarrySpanAndScopePath) {
  Graph g;
  g.scope = "blocks.1.mlp";
  Span at{0, 3, 9, 4, 2};
  NodeId x = input(g, "x", {2}, DType::F32);
  NodeId y = gelu(g, x, at);
  EXPECT_EQ(g.node(y).path, "blocks.1.mlp");
  EXPECT_EQ(g.node(y).span.line, 4u);
  EXPECT_EQ(g.node(param(g, "head.w", {2}, {})).path, "head.w");
}

TEST(Build, SplitAndShapeOps) {
  Graph g;
  NodeId x = input(g, "x", {2, 12}, DType::F32);
  auto parts = split_n(g, x, 3, -1);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(g.node(parts[2]).shape, (Shape{2, 4}));
  EXPECT_EQ(g.node(reshape(g, x, {2, 3, -1})).shape, (Shape{2, 3, 4}));
  EXPECT_EQ(g.node(permute(g, reshape(g, x, {2, 3, 4}), {2, 0, 1})).shape, (Shape{4, 2, 3}));
  NodeId ids = input(g, "ids", {5, 7}, DType::I32);
  EXPECT_EQ(g.node(gather(g, x, ids, 1)).shape, (Shape{2, 5, 7}));
  EXPECT_EQ(g.node(embed(g, ids, input(g, "t", {9, 3}, DType::F32))).shape, (Shape{5, 7, 3}));
  EXPECT_EQ(g.node(slice(g, x, 1, -4, -1)).shape, (Shape{2, 3}));
}

TEST(Build, BuiltinTapsAreAddedAndCanBeOff) {
  Graph g;
  NodeId l = input(g, "l", {2, 3, 5}, DType::F32);
  NodeId t = input(g, "t", {2, 3}, DType::I32);
  cross_entropy(g, l, t);
  std::vector<std::string> taps;
  for (const Node& n : g.nodes())
    if (n.op == Op::Tap) taps.push_back(n.attrs.name);
  EXPECT_EQ(taps, (std::vector<std::string>{"logits/mean", "logits/std", "logits/max"}));
  Graph h;
  h.builtin_taps = false;
  NodeId q = input(h, "q", {2, 4, 3}, DType::F32);
  attention(h, q, q, q, true);
  for (const Node& n : h.nodes()) EXPECT_NE(n.op, Op::Tap);
}

// Known-answer vectors of Random123 (kat_vectors, philox4x32_10).
TEST(Philox, MatchesRandom123KnownAnswers) {
  using philox::Block;
  EXPECT_EQ(philox::philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox::philox4x32_10({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}),
            (Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox::philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Philox, DropoutKeepRateIsAboutOneMinusP) {
  int kept = 0, n = 20000;
  for (int e = 0; e < n; ++e) kept += philox::keep(7, 3, 11, e, 0.25);
  EXPECT_NEAR(kept / double(n), 0.75, 0.02);
  EXPECT_EQ(philox::bits(1, 2, 3, 5), philox::bits(1, 2, 3, 5));
  EXPECT_NE(philox::bits(1, 2, 3, 5), philox::bits(1, 2, 4, 5));
}

}  // namespace
}  // namespace sx
