// Every op, forward and gradient, ggml-style: a small expression using the
// op, its loss sum(y * w) with w random, and autodiff's backward graph of it,
// run on every registered device (cuda on the emulated GPU: kernels
// interpreted, GEMMs by the CPU routine with cuBLASLt's semantics) against
// the reference backend: the loss and every parameter's gradient. In f32 to
// 1e-5 relative; in bf16 (the operands rounded and :precision bf16's rounding
// points, graph/precision.h) against the CPU's bf16 emulation, which is the
// same graph on the reference. A guard fails by name for an op of ops.def
// that no case computes, or whose gradient rule no case reaches.
#include <gtest/gtest.h>

#include "autodiff/autodiff.h"
#include "backend/cpu/test_util.h"
#include "graph/precision.h"

namespace sx::cpu::testing {
namespace {

using namespace ops;

// What a case builds on: the Case's graph and feeds, and whether its
// operands are read rounded to bf16 (as a bf16 activation is).
struct Expr {
  Case& c;
  bool bf16;
  Graph& g() { return c.g; }
  NodeId rounded(NodeId x) { return bf16 ? round_bf16(c.g, x) : x; }
  // A parameter (what gets a gradient) and a constant input, uniform in [lo, hi].
  NodeId p(const Shape& s, float lo = -2, float hi = 2) { return rounded(c.param(s, lo, hi)); }
  NodeId x(const Shape& s, float lo = -2, float hi = 2) { return rounded(c.in(s, lo, hi)); }
  NodeId ids(const Shape& s, int32_t below) { return c.ids(s, below); }
};

using Build = NodeId (*)(Expr&);  // the expression's value y, any shape and dtype
struct OpGradCase {
  const char* name;
  Build build;
};

const OpGradCase kCases[] = {
    // Leaves: param and input everywhere; full and arange inline in the rules (max, cross-entropy).
    {"full-arange",
     [](Expr& e) {
       return mul(e.g(), add(e.g(), e.p({7}), full(e.g(), {7}, 1.5)), cast(e.g(), arange(e.g(), 7), DType::F32));
     }},
    // Unary
    {"cast",
     [](Expr& e) {
       NodeId p = e.p({4, 9});
       return add(e.g(), cast(e.g(), cast(e.g(), p, DType::BF16), DType::F32),
                  mul(e.g(), p, cast(e.g(), e.ids({4, 9}, 5), DType::F32)));
     }},
    {"neg",
     [](Expr& e) {
       return neg(e.g(), e.p({5, 7}));
     }},
    {"exp",
     [](Expr& e) {
       return exp(e.g(), e.p({5, 7}));
     }},
    {"log",
     [](Expr& e) {
       return log(e.g(), e.p({5, 7}, 0.2f, 3));
     }},
    {"sqrt",
     [](Expr& e) {
       return sqrt(e.g(), e.p({5, 7}, 0.2f, 3));
     }},
    {"rsqrt",
     [](Expr& e) {
       return rsqrt(e.g(), e.p({5, 7}, 0.2f, 3));
     }},
    {"sin",
     [](Expr& e) {
       return sin(e.g(), e.p({5, 7}));
     }},
    {"cos",
     [](Expr& e) {
       return cos(e.g(), e.p({5, 7}));
     }},
    {"tanh",
     [](Expr& e) {
       return tanh(e.g(), e.p({5, 7}));
     }},
    {"sigmoid",
     [](Expr& e) {
       return sigmoid(e.g(), e.p({5, 7}));
     }},
    {"relu",
     [](Expr& e) {
       return relu(e.g(), e.p({5, 7}));
     }},
    {"gelu",
     [](Expr& e) {
       return gelu(e.g(), e.p({5, 7}));
     }},
    {"silu",
     [](Expr& e) {
       return silu(e.g(), e.p({5, 7}));
     }},
    {"abs",
     [](Expr& e) {
       return abs(e.g(), e.p({5, 7}));
     }},
    {"sign",
     [](Expr& e) {
       NodeId p = e.p({5, 7});
       return mul(e.g(), sign(e.g(), p), p);
     }},
    {"gelu-grad",
     [](Expr& e) {
       NodeId p = e.p({5, 7});
       return mul(e.g(), unary(e.g(), Op::GeluGrad, p), p);
     }},
    {"round-bf16",
     [](Expr& e) {
       NodeId p = e.p({5, 7});
       return round_bf16(e.g(), mul(e.g(), p, p));
     }},
    // Binary, broadcast both ways: the gradients sum back (sum-to).
    {"add",
     [](Expr& e) {
       return add(e.g(), e.p({3, 5, 7}), e.p({5, 1}));
     }},
    {"sub",
     [](Expr& e) {
       return sub(e.g(), e.p({7}), e.p({3, 5, 7}));
     }},
    {"mul",
     [](Expr& e) {
       return mul(e.g(), e.p({3, 1, 7}), e.p({1, 5, 7}));
     }},
    {"div",
     [](Expr& e) {
       return div(e.g(), e.p({3, 5, 7}), e.p({7}, 0.5f, 2));
     }},
    {"pow",
     [](Expr& e) {
       return pow(e.g(), e.p({3, 5, 7}, 0.5f, 2), e.p({7}, -1.5f, 1.5f));
     }},
    {"maximum",
     [](Expr& e) {
       return maximum(e.g(), e.p({3, 5, 7}), e.p({5, 7}));
     }},
    {"minimum",
     [](Expr& e) {
       return minimum(e.g(), e.p({5, 7}), e.p({3, 5, 7}));
     }},
    // Comparisons pick through where; their own outputs carry no gradient.
    {"eq-ne",
     [](Expr& e) {
       NodeId a = e.p({4, 9}), b = e.p({9});
       NodeId i = e.ids({4, 9}, 3), j = e.ids({9}, 3);
       return add(e.g(), where(e.g(), eq(e.g(), i, j), a, b), where(e.g(), ne(e.g(), a, b), mul(e.g(), a, b), a));
     }},
    {"lt-le-gt-ge",
     [](Expr& e) {
       NodeId a = e.p({4, 9}), b = e.p({9});
       NodeId x = add(e.g(), where(e.g(), lt(e.g(), a, b), a, b), where(e.g(), le(e.g(), b, a), b, a));
       return sub(e.g(), x, add(e.g(), where(e.g(), gt(e.g(), a, b), b, a), where(e.g(), ge(e.g(), a, b), a, b)));
     }},
    {"where",
     [](Expr& e) {
       return where(e.g(), gt(e.g(), e.x({3, 1, 7}), e.x({5, 7})), e.p({5, 7}), e.p({3, 5, 1}));
     }},
    // Matrix: broadcast weights (one product over the flattened batch), batched and transposed.
    {"matmul",
     [](Expr& e) {
       NodeId x = e.p({2, 3, 5, 6}), w = e.p({6, 4});
       NodeId a = e.p({3, 1, 5, 6}), b = e.p({1, 2, 6, 7}), t = e.p({9, 4});
       NodeId y = sum_all(e.g(), matmul(e.g(), x, w));
       y = add(e.g(), y, sum_all(e.g(), matmul(e.g(), a, b)));
       return add(e.g(), reshape(e.g(), matmul(e.g(), transpose(e.g(), t), t), {-1}), y);
     }},
    // Reductions over every axis, kept and not.
    {"sum",
     [](Expr& e) {
       NodeId p = e.p({4, 6, 9});
       return add(e.g(), sum(e.g(), p, 0), add(e.g(), sum(e.g(), p, 1, true), sum(e.g(), p, 2, true)));
     }},
    {"mean",
     [](Expr& e) {
       NodeId p = e.p({4, 6, 9});
       return add(e.g(), mean(e.g(), p, 0, true), add(e.g(), mean(e.g(), p, 1, true), mean(e.g(), p, 2, true)));
     }},
    {"max",
     [](Expr& e) {
       NodeId p = e.p({4, 6, 9});
       return add(e.g(), max(e.g(), p, 0), max(e.g(), p, 2, true));
     }},
    {"logsumexp",
     [](Expr& e) {
       NodeId p = e.p({4, 6, 9});
       return add(e.g(), logsumexp(e.g(), p, 1, true), logsumexp(e.g(), p, 2, true));
     }},
    {"argmax",
     [](Expr& e) {
       NodeId p = e.p({6, 9});
       return mul(e.g(), max(e.g(), p, 1), cast(e.g(), argmax(e.g(), p, 1), DType::F32));
     }},
    // Shape
    {"reshape",
     [](Expr& e) {
       return exp(e.g(), reshape(e.g(), e.p({4, 6, 5}), {6, -1}));
     }},
    {"permute",
     [](Expr& e) {
       return mul(e.g(), permute(e.g(), e.p({3, 4, 5, 2}), {2, 0, 3, 1}), e.x({5, 3, 2, 4}));
     }},
    {"slice-pad",
     [](Expr& e) {
       NodeId p = e.p({4, 9});
       return add(e.g(), tanh(e.g(), slice(e.g(), p, 1, 2, 7)), pad(e.g(), slice(e.g(), p, 1, 0, 3), 1, 1, 1));
     }},
    {"concat",
     [](Expr& e) {
       NodeId p = e.p({4, 3}), q = e.p({4, 5});
       return concat(e.g(), {sin(e.g(), p), q, slice(e.g(), q, 1, 0, 2)}, 1);
     }},
    {"gather-scatter-add",
     [](Expr& e) {
       NodeId p = e.p({7, 5});
       NodeId g = gather(e.g(), p, e.ids({2, 6}, 7), 0);
       NodeId s = scatter_add(e.g(), e.p({3, 4}), e.ids({4}, 15), 1, 15);
       return concat(e.g(), {reshape(e.g(), g, {-1}), reshape(e.g(), s, {-1})}, 0);
     }},
    {"expand-sum-to",
     [](Expr& e) {
       NodeId p = e.p({4, 1, 6});
       NodeId y = expand(e.g(), p, Shape{4, 3, 6});
       return add(e.g(), mul(e.g(), y, e.x({4, 3, 6})), sum_to(e.g(), mul(e.g(), y, y), Shape{3, 6}));
     }},
    // Fused
    {"softmax",
     [](Expr& e) {
       NodeId p = e.p({3, 5, 11});
       return add(e.g(), softmax(e.g(), p), softmax(e.g(), p, 1));
     }},
    {"log-softmax",
     [](Expr& e) {
       NodeId p = e.p({3, 5, 11});
       return add(e.g(), log_softmax(e.g(), p), log_softmax(e.g(), p, 0));
     }},
    {"layer-norm",
     [](Expr& e) {
       return layer_norm(e.g(), e.p({3, 5, 13}), e.p({13}), e.p({13}));
     }},
    {"rms-norm",
     [](Expr& e) {
       return rms_norm(e.g(), e.p({3, 5, 13}), e.p({13}));
     }},
    {"attention",
     [](Expr& e) {
       NodeId q = e.p({2, 3, 9, 8}, -1, 1), k = e.p({2, 3, 9, 8}, -1, 1), v = e.p({2, 3, 9, 5});
       NodeId q2 = e.p({2, 5, 8}, -1, 1), k2 = e.p({2, 7, 8}, -1, 1), v2 = e.p({2, 7, 3});
       return add(e.g(), sum_all(e.g(), attention(e.g(), q, k, v, true)),
                  sum_all(e.g(), attention(e.g(), q2, k2, v2, false, 0.3)));
     }},
    {"embed",
     [](Expr& e) {
       return embed(e.g(), e.ids({2, 7}, 11), e.p({11, 6}));
     }},
    {"cross-entropy-accuracy",
     [](Expr& e) {
       NodeId logits = e.p({3, 5, 17}), targets = e.ids({3, 5}, 17);
       return add(e.g(), cross_entropy(e.g(), logits, targets), accuracy(e.g(), logits, targets));
     }},
    {"dropout",
     [](Expr& e) {
       return dropout(e.g(), mul(e.g(), e.p({7, 13}), e.x({7, 13})), 0.3, 42, 5);
     }},
    // Control
    {"stop-gradient",
     [](Expr& e) {
       NodeId p = e.p({5, 7});
       return mul(e.g(), p, stop_gradient(e.g(), exp(e.g(), p)));
     }},
    {"tap",
     [](Expr& e) {
       NodeId p = e.p({5, 7});
       return mul(e.g(), p, tap(e.g(), "t", max(e.g(), reshape(e.g(), p, {-1}), 0)));
     }},
};

// A case's training graph: y, loss = sum(y * w), the bf16 rounding points
// when bf16, then autodiff. Outputs: the loss and every parameter's gradient.
struct Built {
  Case c;
  Gradients grads;
  std::vector<NodeId> outs;
  std::vector<std::string> names;
};

std::unique_ptr<Built> build(const OpGradCase& oc, bool bf16) {
  auto b = std::make_unique<Built>();
  Case& c = b->c;
  c.g.builtin_taps = false;
  Expr e{c, bf16};
  NodeId y = oc.build(e);
  if (!is_float(c.g.node(y).dtype)) y = cast(c.g, y, DType::F32);
  NodeId loss = sum_all(c.g, mul(c.g, y, e.x(c.g.node(y).shape)));
  if (bf16) {
    std::vector<NodeId> map;
    c.g = round_products_bf16(c.g, {loss}, &map);
    loss = map[loss];
  }
  c.feeds.rng_offset = 0x5eed;
  b->grads = backward(c.g, loss);
  b->outs.push_back(loss);
  b->names.push_back(std::string(oc.name) + ": loss");
  for (const auto& [path, id] : b->grads.params) {
    b->outs.push_back(id);
    b->names.push_back(std::string(oc.name) + ": d " + path);
  }
  return b;
}

void PrintTo(const OpGradCase& c, std::ostream* os) { *os << c.name; }

class OpGrads : public ::testing::TestWithParam<OpGradCase> {};

TEST_P(OpGrads, F32MatchesTheReferenceOnEveryDevice) {
  auto b = build(GetParam(), false);
  check_every_device(b->c, b->outs, b->names, 1e-5, false, 1e-7);
}

// The rounding points are nodes of the graph, the same for every backend;
// the kernels store bf16 where the graph rounds and the GEMM sums in the
// reference's order, so the emulated GPU gives the CPU emulation's bits
// (the bound of 1e-3 is the issue's; the count of differing elements is
// printed and expected to be zero).
TEST_P(OpGrads, Bf16MatchesTheCpuEmulationOnEveryDevice) {
  auto b = build(GetParam(), true);
  Case& c = b->c;
  if (cuda_is_real_gpu()) {  // cuBLASLt's bf16 sums are its own: the 1e-2, no bit count
    c.fill_params();
    auto want = ref::evaluate<float>(c.g, c.feeds, b->outs);
    auto got = c.on_device("cuda", b->outs, 1);
    for (size_t k = 0; k < b->outs.size(); ++k) expect_close(got[k], want[b->outs[k]], 1e-2, b->names[k], 1e-5);
    return;
  }
  check_every_device(c, b->outs, b->names, 1e-3, false, 1e-6);
  auto want = ref::evaluate<float>(c.g, c.feeds, b->outs);
  auto got = c.on_device("cuda", b->outs, 1);
  int64_t differ = 0, total = 0;
  for (size_t k = 0; k < b->outs.size(); ++k) {
    const auto &x = got[k].f, &y = want[b->outs[k]].f;
    total += static_cast<int64_t>(y.size());
    for (size_t i = 0; i < y.size() && i < x.size(); ++i) differ += std::memcmp(&x[i], &y[i], 4) != 0;
  }
  EXPECT_EQ(differ, 0) << GetParam().name << ": " << differ << " of " << total
                       << " bf16 elements differ in their bits between cuda and the CPU emulation";
}

// :precision tf32 on the cuda device: f32 storage, products on tf32
// operands (10 mantissa bits; emulated here by rounding them, cuBLASLt's
// FAST_TF32 on a GPU), against the f32 reference to the 1e-3.
TEST_P(OpGrads, Tf32ProductsAreWithinTheBoundOnCuda) {
  auto b = build(GetParam(), false);
  Case& c = b->c;
  c.fill_params();
  auto want = ref::evaluate<float>(c.g, c.feeds, b->outs);
  auto got = c.on_device("cuda", b->outs, 1, "tf32");
  for (size_t k = 0; k < b->outs.size(); ++k) expect_close(got[k], want[b->outs[k]], 1e-3, b->names[k], 1e-6);
}

INSTANTIATE_TEST_SUITE_P(EveryOp, OpGrads, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<OpGradCase>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

// Ops whose values never lie on a path from a parameter to the loss (leaves
// fed or constant, bool and index results, and stop-gradient, which cuts the
// path): no gradient can flow into them.
bool carries_no_gradient(Op op) {
  switch (op) {
    case Op::Input:
    case Op::Full:
    case Op::Arange:
    case Op::Eq:
    case Op::Ne:
    case Op::Lt:
    case Op::Le:
    case Op::Gt:
    case Op::Ge:
    case Op::Argmax:
    case Op::StopGradient:
      return true;
    default:
      return false;
  }
}

// An op added to ops.def fails here by name until a case above computes it
// (forward or in a backward graph) and, unless it carries no gradient, a
// case reaches its gradient rule (a gradient flows into one of its nodes).
TEST(OpGradsGuard, EveryOpOfOpsDefIsComputedAndDifferentiated) {
  std::vector<bool> computed(kNumOps, false), differentiated(kNumOps, false);
  for (const OpGradCase& oc : kCases) {
    auto b = build(oc, false);
    const Graph& g = b->c.g;
    for (NodeId id = 0; id < static_cast<NodeId>(g.size()); ++id) {
      size_t op = static_cast<size_t>(g.node(id).op);
      computed[op] = true;
      if (id < b->grads.nodes.size() && b->grads.nodes[id] != kNoNode) differentiated[op] = true;
    }
  }
  for (int i = 0; i < kNumOps; ++i) {
    Op op = static_cast<Op>(i);
    EXPECT_TRUE(computed[i]) << op_name(op) << " is in no case of op_grads_test";
    if (!carries_no_gradient(op)) {
      EXPECT_TRUE(differentiated[i]) << op_name(op) << ": no case of op_grads_test reaches its gradient rule";
    }
  }
}

}  // namespace
}  // namespace sx::cpu::testing
