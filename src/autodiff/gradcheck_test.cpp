// Every differentiable op's gradient against float64 central differences.
#include "testing/gradcheck.h"

#include <functional>
#include <set>

namespace sx::gradcheck {
namespace {

using namespace ops;

struct Case {
  std::string name;
  std::function<NodeId(GradCheck&)> build;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

const std::vector<Case>& cases() {
  using C = GradCheck;
  static const std::vector<Case> all = {
      {"neg",
       [](C& c) {
         return neg(c.g, c.operand({2, 3}));
       }},
      {"exp",
       [](C& c) {
         return exp(c.g, c.operand({2, 3}, -2, 2));
       }},
      {"log",
       [](C& c) {
         return log(c.g, c.operand({2, 3}, 0.3, 2));
       }},
      {"sqrt",
       [](C& c) {
         return sqrt(c.g, c.operand({2, 3}, 0.3, 2));
       }},
      {"rsqrt",
       [](C& c) {
         return rsqrt(c.g, c.operand({2, 3}, 0.3, 2));
       }},
      {"sin",
       [](C& c) {
         return sin(c.g, c.operand({2, 3}, -3, 3));
       }},
      {"cos",
       [](C& c) {
         return cos(c.g, c.operand({2, 3}, -3, 3));
       }},
      {"tanh",
       [](C& c) {
         return tanh(c.g, c.operand({2, 3}, -2, 2));
       }},
      {"sigmoid",
       [](C& c) {
         return sigmoid(c.g, c.operand({2, 3}, -3, 3));
       }},
      {"relu",
       [](C& c) {
         return relu(c.g, c.away_from_zero({2, 3}));
       }},
      {"gelu",
       [](C& c) {
         return gelu(c.g, c.operand({3, 4}, -3, 3));
       }},
      {"silu",
       [](C& c) {
         return silu(c.g, c.operand({2, 3}, -3, 3));
       }},
      {"abs",
       [](C& c) {
         return abs(c.g, c.away_from_zero({2, 3}));
       }},
      {"cast",
       [](C& c) {
         return cast(c.g, c.operand({2, 3}), DType::F32);
       }},
      {"add",
       [](C& c) {
         return add(c.g, c.operand({2, 3}), c.operand({3}));
       }},
      {"sub",
       [](C& c) {
         return sub(c.g, c.operand({2, 1}), c.operand({3}));
       }},
      {"mul",
       [](C& c) {
         return mul(c.g, c.operand({2, 3}), c.operand({2, 1}));
       }},
      {"div",
       [](C& c) {
         return div(c.g, c.operand({2, 3}), c.away_from_zero({3}, 0.5));
       }},
      {"pow",
       [](C& c) {
         return pow(c.g, c.operand({2, 3}, 0.5, 2), c.operand({3}, -1.5, 1.5));
       }},
      {"maximum",
       [](C& c) {
         return maximum(c.g, c.operand({2, 3}), c.operand({3}));
       }},
      {"minimum",
       [](C& c) {
         return minimum(c.g, c.operand({2, 1}), c.operand({2, 3}));
       }},
      {"where",
       [](C& c) {
         NodeId cond = gt(c.g, c.constant({2, 3}), scalar(c.g, 0));
         return where(c.g, cond, c.operand({2, 3}), c.operand({3}));
       }},
      {"matmul",
       [](C& c) {
         return matmul(c.g, c.operand({3, 4}), c.operand({4, 2}));
       }},
      {"matmul-batched",
       [](C& c) {
         return matmul(c.g, c.operand({2, 3, 4}), c.operand({4, 5}));
       }},
      {"matmul-broadcast",
       [](C& c) {
         return matmul(c.g, c.operand({3, 4}), c.operand({2, 4, 2}));
       }},
      {"sum",
       [](C& c) {
         return sum(c.g, c.operand({2, 3, 4}), 1);
       }},
      {"sum-keep",
       [](C& c) {
         return sum(c.g, c.operand({2, 3, 4}), -1, true);
       }},
      {"mean",
       [](C& c) {
         return mean(c.g, c.operand({2, 3, 4}), 0);
       }},
      {"max",
       [](C& c) {
         return max(c.g, c.operand({2, 3, 4}), 2);
       }},
      {"max-keep",
       [](C& c) {
         return max(c.g, c.operand({3, 4}), 0, true);
       }},
      {"logsumexp",
       [](C& c) {
         return logsumexp(c.g, c.operand({2, 3, 4}), 1);
       }},
      {"logsumexp-keep",
       [](C& c) {
         return logsumexp(c.g, c.operand({3, 4}), -1, true);
       }},
      {"reshape",
       [](C& c) {
         return reshape(c.g, c.operand({2, 6}), {3, -1});
       }},
      {"permute",
       [](C& c) {
         return permute(c.g, c.operand({2, 3, 4}), {2, 0, 1});
       }},
      {"transpose",
       [](C& c) {
         return transpose(c.g, c.operand({2, 3, 4}));
       }},
      {"slice",
       [](C& c) {
         return slice(c.g, c.operand({3, 5}), 1, 1, 4);
       }},
      {"concat",
       [](C& c) {
         return concat(c.g, {c.operand({2, 1}), c.operand({2, 3})}, 1);
       }},
      {"split",
       [](C& c) {
         auto parts = split_n(c.g, c.operand({2, 4}), 2, 1);
         return mul(c.g, parts[0], parts[1]);
       }},
      {"gather",
       [](C& c) {
         return gather(c.g, c.operand({4, 3}), c.ids_of({5}, {0, 2, 2, 3, 0}), 0);
       }},
      {"gather-2d-ids",
       [](C& c) {
         return gather(c.g, c.operand({2, 4}), c.ids_of({2, 2}, {3, 3, 1, 0}), 1);
       }},
      {"expand",
       [](C& c) {
         return expand(c.g, c.operand({3, 1}), Shape{2, 3, 4});
       }},
      {"sum-to",
       [](C& c) {
         return sum_to(c.g, c.operand({2, 3, 4}), Shape{3, 1});
       }},
      {"pad",
       [](C& c) {
         return pad(c.g, c.operand({2, 3}), 1, 1, 2);
       }},
      {"scatter-add",
       [](C& c) {
         return scatter_add(c.g, c.operand({2, 5}), c.ids_of({5}, {1, 1, 0, 2, 3}), 1, 4);
       }},
      {"softmax",
       [](C& c) {
         return softmax(c.g, c.operand({2, 5}, -2, 2));
       }},
      {"softmax-axis0",
       [](C& c) {
         return softmax(c.g, c.operand({3, 2}, -2, 2), 0);
       }},
      {"log-softmax",
       [](C& c) {
         return log_softmax(c.g, c.operand({2, 5}, -2, 2));
       }},
      {"layer-norm",
       [](C& c) {
         return layer_norm(c.g, c.operand({3, 6}, -2, 2), c.operand({6}, 0.5, 1.5), c.operand({6}));
       }},
      {"rms-norm",
       [](C& c) {
         return rms_norm(c.g, c.operand({3, 6}, -2, 2), c.operand({6}, 0.5, 1.5));
       }},
      {"attention",
       [](C& c) {
         return attention(c.g, c.operand({2, 3, 4}), c.operand({2, 3, 4}), c.operand({2, 3, 2}), false);
       }},
      {"attention-causal",
       [](C& c) {
         return attention(c.g, c.operand({2, 2, 4}), c.operand({2, 4, 4}), c.operand({2, 4, 3}), true, 0.7);
       }},
      {"embed",
       [](C& c) {
         return embed(c.g, c.ids({2, 3}, 5), c.operand({5, 4}));
       }},
      {"cross-entropy",
       [](C& c) {
         return cross_entropy(c.g, c.operand({2, 3, 5}, -2, 2), c.ids({2, 3}, 5));
       }},
      {"dropout",
       [](C& c) {
         return dropout(c.g, c.operand({4, 4}), 0.3, 7, 1);
       }},
      {"tap",
       [](C& c) {
         return tap(c.g, "t", mean_all(c.g, c.operand({2, 3})));
       }},
  };
  return all;
}

class Gradient : public testing::TestWithParam<Case> {};

TEST_P(Gradient, MatchesFiniteDifferences) {
  GradCheck c;
  c.check(GetParam().build(c));
}

INSTANTIATE_TEST_SUITE_P(EveryOp, Gradient, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

// The ops with no gradient (or only a zero one); every other op must appear
// in some case above.
const std::set<Op> kNoGradient = {Op::Input,    Op::Param, Op::Full,   Op::Arange,   Op::Sign,
                                  Op::GeluGrad, Op::Eq,    Op::Ne,     Op::Lt,       Op::Le,
                                  Op::Gt,       Op::Ge,    Op::Argmax, Op::Accuracy, Op::StopGradient};

TEST(Gradient, EveryDifferentiableOpIsChecked) {
  std::set<Op> seen;
  for (const Case& k : cases()) {
    GradCheck c;
    k.build(c);
    for (const Node& n : c.g.nodes()) seen.insert(n.op);
  }
  for (int i = 0; i < kNumOps; ++i) {
    Op op = static_cast<Op>(i);
    // round-bf16 is piecewise constant: its rule is straight through by
    // design, not a derivative finite differences could confirm (checked in
    // model_test.cpp, Bf16Rounding.*).
    if (!kNoGradient.count(op) && op != Op::RoundBf16) {
      EXPECT_TRUE(seen.count(op)) << op_name(op) << " has no gradient check";
    }
  }
}

}  // namespace
}  // namespace sx::gradcheck
