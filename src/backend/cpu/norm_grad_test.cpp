// A layer-norm's or rms-norm's backward run row by row (executor_norm_grad.cpp,
// k_norm_grad.inc) against the same steps run apart: the same bits, with
// and without the gain's gradient and the residual's add, for a row length
// that is not a whole number of lanes, on 1 and 3 threads.
#include <gtest/gtest.h>

#include <cstring>

#include "autodiff/autodiff.h"
#include "backend/cpu/test_util.h"

namespace sx::cpu::testing {
namespace {

using namespace ops;

bool same_bits(const ref::Tensor<float>& a, const ref::Tensor<float>& b) {
  return a.f.size() == b.f.size() && std::memcmp(a.f.data(), b.f.data(), a.f.size() * 4) == 0;
}

// loss = sum(layer-norm(x) * w) over [5, 10, d]: dx, and d gain, d bias
// unless the gain is held constant (then no gy * xhat is made). With a
// residual, x also reaches the loss as x * w (a residual stream's skip), so
// x's gradient is the add of dx and w, which the pass makes.
void expect_rows_give_the_steps_bits(int64_t d, bool gain_grad, bool residual, bool rms) {
  Case c;
  const Shape s{5, 10, d};
  NodeId x = c.param(s), gain = c.param(Shape{d}, 0.5f, 1.5f), bias = c.param(Shape{d}), w = c.in(s);
  if (!gain_grad) gain = stop_gradient(c.g, gain);
  NodeId y = mul(c.g, rms ? rms_norm(c.g, x, gain, 1e-5) : layer_norm(c.g, x, gain, bias, 1e-5), w);
  if (residual) y = add(c.g, y, mul(c.g, x, w));
  NodeId loss = sum(c.g, reshape(c.g, y, {s.numel()}), -1, false);
  Gradients grads = backward(c.g, loss);
  std::vector<NodeId> outs = {loss};
  for (const auto& [path, id] : grads.params) outs.push_back(id);
  std::vector<NodeId> apart = outs;
  for (NodeId id = 0; id < static_cast<NodeId>(c.g.size()); ++id) {
    Op op = c.g.node(id).op;
    if (op == Op::Mul || op == Op::Sub || op == Op::Mean || op == Op::Rsqrt || op == Op::Add) apart.push_back(id);
  }
  std::string what = std::string(rms ? "rms-norm" : "layer-norm") + " d " + std::to_string(d) +
                     (gain_grad ? "" : ", gain constant") + (residual ? ", residual" : "");
  for (int threads : {1, 3}) {
    plan::Plan p = plan::make_plan(c.g, outs);
    CpuExecutor ex(c.g, p, threads);
    ASSERT_EQ(ex.fused(CpuExecutor::Fuse::LayerNormGrad), 1) << what;
    EXPECT_EQ(ex.fused(CpuExecutor::Fuse::LayerNormGradAdd), residual ? 1 : 0) << what;
    ex.run(c.cpu_feeds());
    auto unfused = c.cpu(apart, threads);
    for (size_t k = 0; k < outs.size(); ++k)
      EXPECT_TRUE(same_bits(ex.tensor(outs[k]), unfused[k])) << what << ": output " << k << " on " << threads;
  }
}

TEST(CpuNormGrad, LayerNormRowsGiveTheStepsBits) {
  for (int64_t d : {37, 64})
    for (bool gain_grad : {true, false})
      for (bool residual : {false, true}) expect_rows_give_the_steps_bits(d, gain_grad, residual, false);
}

TEST(CpuNormGrad, RmsNormRowsGiveTheStepsBits) {
  for (int64_t d : {37, 64})
    for (bool gain_grad : {true, false})
      for (bool residual : {false, true}) expect_rows_give_the_steps_bits(d, gain_grad, residual, true);
}

}  // namespace
}  // namespace sx::cpu::testing
