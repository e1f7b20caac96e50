// Every op, forward: the CPU backend against the reference on random inputs,
// with broadcasting, non-contiguous views and sizes that are not multiples of
// the vector width or the tiles.
#include <gtest/gtest.h>

#include "backend/cpu/test_util.h"

namespace sx::cpu::testing {
namespace {

using namespace ops;

// Every output named by its node and op, on every device (test_util.h).
void check(Case& c, const std::vector<NodeId>& outs, double rtol = 1e-5, bool exact = false) {
  std::vector<std::string> names;
  for (NodeId id : outs) names.push_back("%" + std::to_string(id) + " " + op_name(c.g.node(id).op));
  check_every_device(c, outs, names, rtol, exact);
}

// A case of the table below: a graph built on `c` and the outputs to compare.
struct OpCase {
  std::vector<NodeId> outs;
  double rtol = 1e-5;
  bool exact = false;
};
using BuildCase = OpCase (*)(Case&);

void check(BuildCase build) {
  Case c;
  OpCase oc = build(c);
  check(c, oc.outs, oc.rtol, oc.exact);
}

OpCase unary_float_case(Case& c) {
  NodeId x = c.in({5, 37}), p = c.in({3, 19}, 0.1f, 4.0f);
  std::vector<NodeId> outs;
  for (Op op : {Op::Neg, Op::Exp, Op::Sin, Op::Cos, Op::Tanh, Op::Sigmoid, Op::Relu, Op::Gelu, Op::Silu, Op::Abs,
                Op::Sign, Op::GeluGrad})
    outs.push_back(unary(c.g, op, x));
  for (Op op : {Op::Log, Op::Sqrt, Op::Rsqrt}) outs.push_back(unary(c.g, op, p));
  return {outs};
}
TEST(CpuOps, UnaryFloat) { check(unary_float_case); }

// Round to nearest even at the 16th bit: ties both ways, a carry into the
// exponent and into inf, subnormals, signed zero, inf and NaN, and random values.
float from_bits(uint32_t b) {
  float x;
  std::memcpy(&x, &b, 4);
  return x;
}
OpCase round_bf16_case(Case& c) {
  auto f = from_bits;
  std::vector<float> v = {f(0x3f808000u), f(0x3f818000u), f(0x3f808001u), f(0x3f80ffffu), f(0x3fffffffu),
                          f(0x7f7fffffu), f(0xff7f8000u), f(0x00008000u), f(0x00018000u), f(0x807fffffu),
                          0.0f,           -0.0f,          INFINITY,       -INFINITY,      NAN,
                          1.0f / 3,       -1e-30f,        3e38f};
  std::uniform_real_distribution<float> u(-3, 3);
  while (v.size() < 203) v.push_back(u(c.rng));
  c.feeds.inputs["x"] = ref::Tensor<float>::of(Shape{static_cast<int64_t>(v.size())}, v);
  NodeId y = round_bf16(c.g, input(c.g, "x", {static_cast<int64_t>(v.size())}, DType::F32));
  return {{y}, 0, true};
}
TEST(CpuOps, RoundBf16) {
  Case c;
  auto f = from_bits;
  OpCase oc = round_bf16_case(c);
  check(c, oc.outs, oc.rtol, oc.exact);
  auto got = c.cpu(oc.outs, 1)[0].f;
  EXPECT_EQ(got[0], f(0x3f800000u));  // a tie rounds to the even neighbour, down
  EXPECT_EQ(got[1], f(0x3f820000u));  // and up
  EXPECT_EQ(got[2], f(0x3f810000u));  // above the tie
  EXPECT_EQ(got[4], 2.0f);            // the carry reaches the exponent
  EXPECT_EQ(got[5], INFINITY);        // past the largest bf16
  EXPECT_TRUE(std::isnan(got[14]));
  for (float x : got) {
    uint32_t b;
    std::memcpy(&b, &x, 4);
    EXPECT_TRUE((b & 0xffffu) == 0 || std::isnan(x)) << x << " is not a bf16 value";
  }
}

OpCase exact_ops_case(Case& c) {
  NodeId x = c.in({4, 33}), y = c.in({33});
  NodeId i = c.ids({4, 33}, 100), j = c.ids({33}, 100);
  return {{neg(c.g, x),
           abs(c.g, x),
           relu(c.g, x),
           sign(c.g, x),
           add(c.g, x, y),
           sub(c.g, y, x),
           mul(c.g, x, y),
           div(c.g, x, y),
           maximum(c.g, x, y),
           minimum(c.g, y, x),
           lt(c.g, x, y),
           ge(c.g, y, x),
           eq(c.g, x, x),
           ne(c.g, x, y),
           add(c.g, i, j),
           sub(c.g, i, j),
           mul(c.g, i, j),
           maximum(c.g, i, j),
           neg(c.g, i),
           abs(c.g, neg(c.g, i)),
           sign(c.g, sub(c.g, i, j)),
           relu(c.g, sub(c.g, i, j)),
           le(c.g, i, j),
           eq(c.g, lt(c.g, i, j), gt(c.g, j, i)),
           where(c.g, gt(c.g, x, y), x, y),
           cast(c.g, x, DType::I32),
           cast(c.g, x, DType::Bool),
           cast(c.g, i, DType::F32),
           cast(c.g, x, DType::BF16),
           add(c.g, cast(c.g, x, DType::BF16), y),
           full(c.g, {3, 5}, 1.5),
           full(c.g, {7}, 3, DType::I32),
           arange(c.g, 11),
           arange(c.g, 5, DType::F32)},
          0,
          true};
}
TEST(CpuOps, ExactOps) { check(exact_ops_case); }

OpCase binary_broadcasts_case(Case& c) {
  NodeId a = c.in({3, 5, 7}), row = c.in({7}), col = c.in({5, 1}), s = c.in({}), mid = c.in({3, 1, 7});
  NodeId lead = c.in({1, 5, 7}), pos = c.in({3, 5, 7}, 0.5f, 2.0f);
  std::vector<NodeId> outs;
  for (NodeId b : {row, col, s, mid, lead}) {
    outs.push_back(add(c.g, a, b));
    outs.push_back(sub(c.g, b, a));
    outs.push_back(mul(c.g, b, a));
    outs.push_back(div(c.g, a, b));
    outs.push_back(where(c.g, gt(c.g, a, b), b, a));
  }
  outs.push_back(pow(c.g, pos, row));
  outs.push_back(add(c.g, col, row));  // both broadcast: [5, 7]
  return {outs};
}
TEST(CpuOps, BinaryBroadcasts) { check(binary_broadcasts_case); }

OpCase matmul_case(Case& c) {
  NodeId a = c.in({2, 3, 17, 19}), b = c.in({19, 23});
  NodeId p = c.in({3, 1, 5, 6}), q = c.in({1, 4, 6, 7});
  NodeId big_a = c.in({130, 70}), big_b = c.in({70, 600});  // crosses the 64-row and 512-column tiles
  NodeId t = c.in({9, 4});
  return {{matmul(c.g, a, b), matmul(c.g, p, q), matmul(c.g, big_a, big_b), matmul(c.g, transpose(c.g, t), t),
           matmul(c.g, b, transpose(c.g, b))}};
}
TEST(CpuOps, Matmul) { check(matmul_case); }

// A product with k = 0 (+0, then the bias) and the gelu or add after it,
// which the executor would otherwise fuse into tiles such a product never runs.
OpCase empty_product_case(Case& c) {
  NodeId a = c.in({5, 0}), b = c.in({0, 7}), bias = c.in({7}), x = c.in({5, 7});
  return {{gelu(c.g, add(c.g, matmul(c.g, a, b), bias)), add(c.g, matmul(c.g, a, b), x)}};
}
TEST(CpuOps, EmptyProductThenAStep) { check(empty_product_case); }

OpCase reductions_case(Case& c) {
  NodeId x = c.in({4, 6, 37});
  NodeId i = c.ids({4, 6, 37}, 50);
  std::vector<NodeId> outs;
  for (int axis = 0; axis < 3; ++axis)
    for (bool keep : {false, true}) {
      for (Op op : {Op::Sum, Op::Mean, Op::Max, Op::LogSumExp, Op::Argmax})
        outs.push_back(reduce(c.g, op, x, axis, keep));
      for (Op op : {Op::Sum, Op::Max, Op::Argmax}) outs.push_back(reduce(c.g, op, i, axis, keep));
    }
  outs.push_back(sum_all(c.g, x));
  outs.push_back(mean_all(c.g, x));
  NodeId long_line = c.in({5000});
  outs.push_back(sum(c.g, long_line, 0));
  return {outs};
}
TEST(CpuOps, Reductions) { check(reductions_case); }

OpCase shape_ops_are_exact_case(Case& c) {
  NodeId x = c.in({3, 4, 5, 6});
  NodeId m = c.in({7, 9});
  NodeId ids = c.ids({2, 5}, 7);
  NodeId i = c.ids({3, 4}, 1000);
  return {{reshape(c.g, x, {12, -1}), permute(c.g, x, {2, 0, 3, 1}), transpose(c.g, x), slice(c.g, x, 2, 1, 4),
           slice(c.g, x, 3, -4, -1), concat(c.g, {x, permute(c.g, x, {0, 1, 2, 3})}, 1),
           concat(c.g, {slice(c.g, x, 3, 0, 2), x, slice(c.g, x, 3, 5, 6)}, 3), gather(c.g, m, ids, 0),
           gather(c.g, m, ids, 1), expand(c.g, reshape(c.g, m, {7, 1, 9}), Shape{7, 4, 9}), pad(c.g, x, 1, 2, 3),
           pad(c.g, m, 1, 0, 5), permute(c.g, i, {1, 0}), concat(c.g, {i, i}, 0), stop_gradient(c.g, x),
           tap(c.g, "t", max(c.g, reshape(c.g, m, {-1}), 0))},
          0,
          true};
}
TEST(CpuOps, ShapeOpsAreExact) { check(shape_ops_are_exact_case); }

// Copies of rows of 8, 16 and 32 floats (k_shape's copy runs them as
// fixed-size moves, a run of rows at a time): attention's heads moved
// ([b, t, h, d] -> [b, h, t, d]) and back, with enough rows that 2 and 3
// threads cut runs in the middle, a concat of such rows, a permute whose
// inner rows are strided, and the tiny gpt's shape.
OpCase short_row_copies_case(Case& c) {
  std::vector<NodeId> outs;
  for (Shape s : {Shape{6, 50, 8, 8}, Shape{4, 70, 6, 16}, Shape{3, 130, 4, 32}, Shape{8, 16, 4, 8}}) {
    NodeId x = c.in(s);
    NodeId heads = permute(c.g, x, {0, 2, 1, 3});
    outs.push_back(heads);
    outs.push_back(permute(c.g, neg(c.g, heads), {0, 2, 1, 3}));
    outs.push_back(concat(c.g, {x, neg(c.g, x)}, 3));
    outs.push_back(permute(c.g, x, {0, 1, 3, 2}));
  }
  return {outs, 0, true};
}
TEST(CpuOps, ShortRowCopiesAreExact) { check(short_row_copies_case); }

// A where and the softmax of it (the executor fuses them: k_fused's
// run_where_softmax walks the where's rows with a cursor): attention's
// causal mask broadcast over batch and heads, rows of 16 and of 40 keys,
// enough rows that 2 and 3 threads cut the where's rows mid-way, and a
// condition of the scores' own shape, whose where is one long row.
OpCase where_softmax_case(Case& c) {
  std::vector<NodeId> outs;
  for (int64_t t : {16, 40}) {
    NodeId scores = c.in({3, 5, t, t});
    NodeId causal = le(c.g, reshape(c.g, arange(c.g, t), {1, t}), reshape(c.g, arange(c.g, t), {t, 1}));
    NodeId fill = full(c.g, {}, -std::numeric_limits<double>::infinity());
    outs.push_back(softmax(c.g, where(c.g, causal, scores, fill)));
    outs.push_back(softmax(c.g, where(c.g, gt(c.g, scores, c.in({3, 5, t, t})), scores, fill)));
  }
  return {outs};
}
TEST(CpuOps, WhereThenSoftmax) { check(where_softmax_case); }

// Two float steps the executor runs as one pass (run_binary_binary, whose
// tasks walk both steps' rows with cursors), the second's output times a
// scalar too (the softmax backward's (dP - r) * P * scale): a per-row
// operand broadcast over rows of 16, so the two steps' inner lengths
// differ; enough rows for 2 and 3 threads to split; rows of 5000, longer
// than a segment; and a column operand broadcast over the rows.
OpCase binary_pairs_case(Case& c) {
  std::vector<NodeId> outs;
  for (Shape s : {Shape{3, 5, 40, 16}, Shape{2, 3, 5000}}) {
    Shape row = s, col = s;
    row[s.rank - 1] = 1;
    col[0] = 1;
    NodeId dp = c.in(s), p = c.in(s), r = c.in(row), w = c.in(col);
    outs.push_back(mul(c.g, mul(c.g, sub(c.g, dp, r), p), scalar(c.g, 0.125)));
    outs.push_back(add(c.g, w, mul(c.g, dp, r)));
  }
  return {outs, 0, true};
}
TEST(CpuOps, BinaryPairsAreExact) { check(binary_pairs_case); }

OpCase sums_that_undo_broadcasting_case(Case& c) {
  NodeId x = c.in({3, 5, 7}), g = c.in({2, 5, 7}), ids = c.ids({2}, 4), tab = c.ids({2, 7}, 9);
  NodeId big = c.in({600, 70});
  return {{sum_to(c.g, x, Shape{7}), sum_to(c.g, x, Shape{5, 1}), sum_to(c.g, x, Shape{3, 1, 7}),
           sum_to(c.g, x, Shape{1, 5, 7}), sum_to(c.g, x, Shape{}), sum_to(c.g, big, Shape{70}),
           sum_to(c.g, big, Shape{600, 1}), scatter_add(c.g, g, ids, 0, 4), scatter_add(c.g, g, c.ids({2}, 2), 0, 2),
           scatter_add(c.g, x, c.ids({5}, 3), 1, 3), scatter_add(c.g, tab, ids, 0, 4)},
          0,
          true};
}
TEST(CpuOps, SumsThatUndoBroadcasting) { check(sums_that_undo_broadcasting_case); }

OpCase non_contiguous_view_chains_case(Case& c) {
  NodeId x = c.in({4, 6, 10}), y = c.in({10, 3});
  NodeId v = transpose(c.g, slice(c.g, permute(c.g, x, {2, 0, 1}), 0, 1, 9));  // [8, 6, 4]
  NodeId w = reshape(c.g, slice(c.g, transpose(c.g, y), 1, 0, 2), {1, 6, 1});
  return {{v, add(c.g, v, full(c.g, {4}, 2.0)), mul(c.g, v, v), exp(c.g, transpose(c.g, v)),
           matmul(c.g, v, transpose(c.g, reshape(c.g, slice(c.g, x, 2, 0, 4), {24, 4}))), sum(c.g, v, 1),
           softmax(c.g, v, 1), layer_norm(c.g, v, c.in({4}), c.in({4})), add(c.g, w, v)}};
}
TEST(CpuOps, NonContiguousViewChains) { check(non_contiguous_view_chains_case); }

OpCase fused_case(Case& c) {
  NodeId x = c.in({3, 5, 33}, -4, 4), gain = c.in({33}), bias = c.in({33});
  NodeId logits = c.in({3, 5, 41}, -5, 5), targets = c.ids({3, 5}, 41);
  NodeId table = c.in({11, 19}), ids = c.ids({2, 7}, 11);
  NodeId mask = c.in({2, 3}, -INFINITY, -INFINITY);  // all -inf: softmax gives NaN like the reference
  return {{softmax(c.g, x), softmax(c.g, x, 0), softmax(c.g, x, 1), log_softmax(c.g, x), log_softmax(c.g, x, 1),
           layer_norm(c.g, x, gain, bias), rms_norm(c.g, x, gain), embed(c.g, ids, table),
           cross_entropy(c.g, logits, targets), accuracy(c.g, logits, targets), softmax(c.g, mask)}};
}
TEST(CpuOps, Fused) { check(fused_case); }

OpCase attention_case(Case& c) {
  NodeId q = c.in({2, 3, 70, 16}), k = c.in({2, 3, 70, 16}), v = c.in({2, 3, 70, 12});
  NodeId q2 = c.in({2, 5, 8}), k2 = c.in({2, 9, 8}), v2 = c.in({2, 9, 3});  // fewer queries than keys
  NodeId q3 = c.in({9, 8}), k3 = c.in({5, 8}), v3 = c.in({5, 4});           // more: the first rows see nothing
  NodeId q4 = c.in({40, 8}), k4 = c.in({8, 8}), v4 = c.in({8, 4});  // whole register tiles of rows that see nothing
  return {{attention(c.g, q, k, v, true), attention(c.g, q, k, v, false), attention(c.g, q2, k2, v2, true),
           attention(c.g, q2, k2, v2, false, 0.3), attention(c.g, q3, k3, v3, true), attention(c.g, q4, k4, v4, true)}};
}
TEST(CpuOps, Attention) { check(attention_case); }

// V's infinities at keys that causal rows do not see, in both query tiles
// (0 x inf is NaN: column 1 of rows 0-29 and column 5 of rows 0-64 turn
// NaN, so those tiles run over every key), and one at a key every row sees
// (row 0 of w: the rows past it checked, the skips stay, the same bits).
OpCase attention_non_finite_values_case(Case& c) {
  NodeId q = c.in({70, 16}), k = c.in({70, 16}), v = c.in({70, 12}), w = c.in({70, 12});
  std::vector<float>& vs = c.feeds.inputs["in2"].f;
  vs[30 * 12 + 1] = INFINITY, vs[65 * 12 + 5] = -INFINITY;
  c.feeds.inputs["in3"].f[0 * 12 + 2] = INFINITY;
  return {{attention(c.g, q, k, v, true), attention(c.g, q, k, w, true)}};
}
TEST(CpuOps, AttentionNonFiniteValues) { check(attention_non_finite_values_case); }

OpCase dropout_matches_the_philox_stream_exactly_case(Case& c) {
  c.feeds.rng_offset = 0x1234567890ull;
  NodeId x = c.in({7, 33});
  return {{dropout(c.g, x, 0.3, 42, 5), dropout(c.g, neg(c.g, x), 0.5, 0xFFFFFFFFFFull, 0)}, 0, true};
}
TEST(CpuOps, DropoutMatchesThePhiloxStreamExactly) { check(dropout_matches_the_philox_stream_exactly_case); }

// Parameters are the device's buffers (uploaded by model path), read in place by every graph.
OpCase params_case(Case& c) {
  NodeId w = param(c.g, "layer.w", {6, 5}, {}), b = param(c.g, "layer.b", {5}, {});
  NodeId x = c.in({3, 6});
  return {{add(c.g, matmul(c.g, x, w), b), mul(c.g, w, w)}};
}
TEST(CpuOps, Params) { check(params_case); }

// Every case above, for the guard.
constexpr BuildCase kCases[] = {unary_float_case,
                                round_bf16_case,
                                exact_ops_case,
                                binary_broadcasts_case,
                                matmul_case,
                                reductions_case,
                                shape_ops_are_exact_case,
                                sums_that_undo_broadcasting_case,
                                non_contiguous_view_chains_case,
                                fused_case,
                                attention_case,
                                attention_non_finite_values_case,
                                dropout_matches_the_philox_stream_exactly_case,
                                params_case};

// An op added to ops.def fails here until a case above computes it on every device.
TEST(CpuOps, EveryOpOfOpsDefIsCovered) {
  std::vector<bool> covered(kNumOps, false);
  for (BuildCase build : kCases) {
    Case c;
    build(c);
    for (const Node& n : c.g.nodes()) covered[static_cast<size_t>(n.op)] = true;
  }
  for (int op = 0; op < kNumOps; ++op)
    EXPECT_TRUE(covered[static_cast<size_t>(op)]) << op_name(static_cast<Op>(op)) << " is in no case of ops_test";
}

TEST(CpuOps, EveryDeviceIsTried) {
  auto names = backend::device_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "cpu"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "ref"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "cuda"), names.end());
  EXPECT_TRUE(kEmulateCuda);
}

TEST(CpuOps, BadIdsAreUserErrors) {
  Case c;
  NodeId table = c.in({4, 3});
  NodeId ids = c.ids({5}, 4);
  c.feeds.inputs["in1"].i[2] = 4;
  NodeId e = embed(c.g, ids, table);
  plan::Plan p = plan::make_plan(c.g, {e});
  CpuExecutor ex(c.g, p, 2);
  EXPECT_THROW(ex.run(c.cpu_feeds()), UserError);
}

}  // namespace
}  // namespace sx::cpu::testing
