// Attention's backward run head by head (executor_attention_grad.cpp,
// k_attention_grad.inc) against the same steps run apart: the same values,
// whether the heads skip the causal mask's zeros or, where a value the
// zeros would meet is not finite or dO V^T could overflow, run whole.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "autodiff/autodiff.h"
#include "backend/cpu/cache_info.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/test_util.h"

namespace sx::cpu::testing {
namespace {

using namespace ops;

// The same bits, or both NaN: a NaN's sign follows the operand order of a
// commutative step (x86 keeps the first operand's NaN), which the region
// and the steps apart need not share (the region before its zeros were
// skipped gave a NaN of the other sign where q held a NaN).
bool same_values(const ref::Tensor<float>& a, const ref::Tensor<float>& b) {
  if (a.f.size() != b.f.size()) return false;
  for (size_t e = 0; e < a.f.size(); ++e)
    if (std::memcmp(&a.f[e], &b.f[e], 4) != 0 && !(std::isnan(a.f[e]) && std::isnan(b.f[e]))) return false;
  return true;
}

struct Attention {
  Case c;
  NodeId loss = kNoNode;
  std::vector<NodeId> outs;  // the loss and dq, dk, dv
};

// loss = sum(attention(q, k, v) * w): dO is w. q, k, v [2, 3, 48, 8].
Attention attention_case(bool causal) {
  Attention a;
  Case& c = a.c;
  c.g.builtin_taps = false;
  const Shape s{2, 3, 48, 8};
  NodeId q = c.param(s), k = c.param(s), v = c.param(s), w = c.in(s);
  a.loss = sum(c.g, mul(c.g, attention(c.g, q, k, v, causal, 0), w), -1, false);
  a.loss = sum(c.g, reshape(c.g, a.loss, {s.numel() / 8}), -1, false);
  Gradients grads = backward(c.g, a.loss);
  a.outs = {a.loss};
  for (const auto& [path, id] : grads.params) a.outs.push_back(id);
  return a;
}

// The outputs with the region (and how many heads skipped zeros), and with
// its steps apart: every matmul, where and binary step an output.
void expect_region_gives_the_steps_bits(Attention& a, int64_t want_skipping, const std::string& what) {
  std::vector<NodeId> apart = a.outs;
  for (NodeId id = 0; id < static_cast<NodeId>(a.c.g.size()); ++id) {
    Op op = a.c.g.node(id).op;
    if (op == Op::Matmul || op == Op::Where || op == Op::Sub || op == Op::Mul || op == Op::Softmax) apart.push_back(id);
  }
  for (int threads : {1, 3}) {
    plan::Plan p = plan::make_plan(a.c.g, a.outs);
    CpuExecutor ex(a.c.g, p, threads);
    ASSERT_EQ(ex.fused(CpuExecutor::Fuse::AttentionGrad), 1) << what;
    ex.run(a.c.cpu_feeds());
    EXPECT_EQ(ex.heads_skipping_zeros(), want_skipping) << what << " on " << threads;
    auto unfused = a.c.cpu(apart, threads);
    for (size_t k = 0; k < a.outs.size(); ++k)
      EXPECT_TRUE(same_values(ex.tensor(a.outs[k]), unfused[k])) << what << ": output " << k << " on " << threads;
  }
}

struct SmallCaches {  // the region runs only where the scores do not fit in half of L2
  CacheSizes small{4 << 10, 8 << 10, 64 << 10};
  SmallCaches() { set_gemm_caches(&small); }
  ~SmallCaches() { set_gemm_caches(nullptr); }
};

TEST(CpuAttentionGrad, CausalHeadsSkipZerosForTheSameBits) {
  SmallCaches caches;
  Attention a = attention_case(true);
  expect_region_gives_the_steps_bits(a, 6, "causal");
}

// A head whose q, k, v or dO holds an inf or a NaN, or whose dO V^T could
// overflow, runs whole (its zeros times an inf are NaN in the unfused steps);
// the other heads still skip.
TEST(CpuAttentionGrad, NonFiniteOrHugeValuesRunTheirHeadWhole) {
  SmallCaches caches;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  struct Poison {
    const char* what;
    int tensor;  // 0 q, 1 k, 2 v (params p0..p2), 3 w (dO)
    float value;
  } poisons[] = {{"q nan", 0, nan}, {"k inf", 1, inf}, {"v -inf", 2, -inf}, {"dO inf", 3, inf}, {"dO huge", 3, 3e38f}};
  for (const Poison& poison : poisons) {
    Attention a = attention_case(true);
    // Head 4 (batch 1, head 1), its row 20, column 3: the zeros of keys 21
    // on in query row 20 meet it (the row of a key past 20 in query rows
    // 0-19), in tiles of C that skip them (keys from 28 on, past a 14-row tile).
    int64_t at = ((1 * 3 + 1) * 48 + 20) * 8 + 3;
    std::vector<float>& values = poison.tensor == 3 ? a.c.feeds.inputs.begin()->second.f
                                                    : a.c.feeds.params["p" + std::to_string(poison.tensor)].f;
    values[static_cast<size_t>(at)] = poison.value;
    expect_region_gives_the_steps_bits(a, 5, poison.what);
  }
}

}  // namespace
}  // namespace sx::cpu::testing
