// The row-kernel templates of the CUDA prelude, their very text run on the
// CPU by the SIMT shim (threads in order and in reverse), against the
// reference backend: the forward ops, and their gradients as autodiff builds
// them. f32 to 1e-5; bf16 (bf16 inputs and outputs, f32 inside) to a bf16
// rounding of the reference on the same rounded inputs.
#include <map>

#include "autodiff/autodiff.h"
#include "backend/cuda/codegen/prelude.h"
#include "backend/ref/ref.h"
#include "codegen_test_util.h"
#include "graph/build.h"

namespace sx::cuda::test {
namespace {

using codegen::kRowBlock;
using ops::Dims;

std::shared_ptr<simt::CudaOnCpu> templates() {
  return compile_on_cpu("templates", codegen::template_instances_source());
}

// A small graph evaluated by the reference: float params by name (the
// tensors whose gradients are wanted), a loss sum(y * w) so that dy = w;
// computed in double, the values the kernels' f32 approximate.
struct Reference {
  Graph g;
  std::map<std::string, std::vector<float>> values;
  std::map<std::string, Shape> shapes;
  std::map<std::string, ref::Tensor<double>> int_inputs;

  NodeId param(const std::string& name, const Dims& shape, std::vector<float> v) {
    values[name] = std::move(v);
    NodeId id = ops::param(g, name, shape, Init{});
    shapes[name] = g.node(id).shape;
    return id;
  }
  NodeId ids(const std::string& name, const Dims& shape, std::vector<int32_t> v) {
    NodeId id = ops::input(g, name, shape, DType::I32);
    int_inputs[name] = ref::Tensor<double>::ints(g.node(id).shape, std::move(v));
    return id;
  }
  // y, and the gradients of sum(y * w) by param name (w empty: y is the loss,
  // or, not a scalar, has none).
  std::pair<std::vector<float>, std::map<std::string, std::vector<float>>> run(NodeId y, const std::vector<float>& w) {
    NodeId loss = y;
    ref::Feeds<double> feeds;
    if (!w.empty()) {
      NodeId wn = ops::input(g, "w", g.node(y).shape.vec(), DType::F32);
      feeds.inputs["w"] = ref::Tensor<double>::of(g.node(y).shape, {w.begin(), w.end()});
      loss = ops::sum_all(g, ops::mul(g, y, wn));
    }
    Gradients grads;  // none for a forward-only case (a y that is not a loss)
    if (g.node(loss).shape.rank == 0) grads = backward(g, loss);
    for (auto& [name, v] : values) feeds.params[name] = ref::Tensor<double>::of(shapes[name], {v.begin(), v.end()});
    for (auto& [name, t] : int_inputs) feeds.inputs[name] = t;
    std::vector<NodeId> outs{y};
    for (auto& [name, id] : grads.params) outs.push_back(id);
    auto t = ref::evaluate(g, feeds, outs);
    std::map<std::string, std::vector<float>> gradients;
    for (auto& [name, id] : grads.params) gradients[name] = {t[id].f.begin(), t[id].f.end()};
    return {{t[y].f.begin(), t[y].f.end()}, gradients};
  }
};

struct NormCase {
  bool centered;
  int rows, d;
};

class NormTemplates : public ::testing::TestWithParam<NormCase> {};

TEST_P(NormTemplates, ForwardAndBackwardMatchTheReference) {
  auto [centered, rows, d] = GetParam();
  auto cu = templates();
  const std::string kind = centered ? "layernorm" : "rmsnorm";
  for (auto order : kOrders) {
    uint32_t seed = order == simt::Order::reverse ? 100 : 0;
    auto x = values(static_cast<size_t>(rows) * d, seed + 1, 2.0f, 0.5f);
    auto gain = values(d, seed + 2, 1.0f, 1.0f), bias = values(d, seed + 3, 0.5f);
    auto dy = values(x.size(), seed + 4);
    Reference r;
    NodeId xn = r.param("x", {rows, d}, x), gn = r.param("gain", {d}, gain);
    NodeId y =
        centered ? ops::layer_norm(r.g, xn, gn, r.param("bias", {d}, bias), 1e-5) : ops::rms_norm(r.g, xn, gn, 1e-5);
    auto [want_y, want_grads] = r.run(y, dy);

    std::vector<float> got_y(x.size(), -7.0f), mean(rows, -7.0f), rstd(rows, -7.0f);
    std::vector<float> got_dx(x.size(), -7.0f), dgain(d, -7.0f), dbias(d, -7.0f);
    const float* cx = x.data();
    int dgrid = (d + kRowBlock - 1) / kRowBlock;
    if (centered) {
      cu->launch("sx_layernorm_fwd_f32", {unsigned(rows)}, {kRowBlock}, order, got_y.data(), mean.data(), rstd.data(),
                 cx, static_cast<const float*>(gain.data()), static_cast<const float*>(bias.data()), d, 1e-5f);
      cu->launch("sx_layernorm_bwd_f32", {unsigned(rows)}, {kRowBlock}, order, got_dx.data(),
                 static_cast<const float*>(dy.data()), cx, static_cast<const float*>(mean.data()),
                 static_cast<const float*>(rstd.data()), static_cast<const float*>(gain.data()), d);
      cu->launch("sx_layernorm_bwd_params_f32", {unsigned(dgrid)}, {kRowBlock}, order, dgain.data(), dbias.data(),
                 static_cast<const float*>(dy.data()), cx, static_cast<const float*>(mean.data()),
                 static_cast<const float*>(rstd.data()), rows, d);
      expect_close(dbias, want_grads["bias"], 1e-5, kind + " dbias");
    } else {
      cu->launch("sx_rmsnorm_fwd_f32", {unsigned(rows)}, {kRowBlock}, order, got_y.data(), rstd.data(), cx,
                 static_cast<const float*>(gain.data()), d, 1e-5f);
      cu->launch("sx_rmsnorm_bwd_f32", {unsigned(rows)}, {kRowBlock}, order, got_dx.data(),
                 static_cast<const float*>(dy.data()), cx, static_cast<const float*>(rstd.data()),
                 static_cast<const float*>(gain.data()), d);
      cu->launch("sx_rmsnorm_bwd_params_f32", {unsigned(dgrid)}, {kRowBlock}, order, dgain.data(),
                 static_cast<const float*>(dy.data()), cx, static_cast<const float*>(rstd.data()), rows, d);
    }
    expect_close(got_y, want_y, 1e-5, kind + " y");
    expect_close(got_dx, want_grads["x"], 1e-5, kind + " dx");
    expect_close(dgain, want_grads["gain"], 1e-5, kind + " dgain");
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, NormTemplates,
                         ::testing::Values(NormCase{true, 3, 1}, NormCase{true, 4, 37}, NormCase{true, 2, 300},
                                           NormCase{false, 3, 5}, NormCase{false, 4, 64}, NormCase{false, 2, 300}));

TEST(NormTemplates, Bf16RoundsWhereTheCpuEmulationDoes) {
  auto cu = templates();
  const int rows = 3, d = 70;
  for (auto order : kOrders) {
    uint32_t seed = order == simt::Order::reverse ? 50 : 0;
    auto x = rounded_bf16(values(static_cast<size_t>(rows) * d, seed + 1, 2.0f, 0.5f));
    auto gain = values(d, seed + 2, 1.0f, 1.0f), bias = values(d, seed + 3, 0.5f);
    Reference r;
    NodeId y =
        ops::layer_norm(r.g, r.param("x", {rows, d}, x), r.param("gain", {d}, gain), r.param("bias", {d}, bias), 1e-5);
    auto want = rounded_bf16(r.run(y, {}).first);
    auto xb = to_bf16(x);
    std::vector<uint16_t> yb(x.size(), 0);
    cu->launch("sx_layernorm_fwd_bf16", {unsigned(rows)}, {kRowBlock}, order, yb.data(), static_cast<float*>(nullptr),
               static_cast<float*>(nullptr), static_cast<const uint16_t*>(xb.data()),
               static_cast<const float*>(gain.data()), static_cast<const float*>(bias.data()), d, 1e-5f);
    expect_close(from_bf16(yb), want, 1.0 / 128, "bf16 layernorm y");  // one bf16 step
  }
}

TEST(SoftmaxTemplates, ForwardAndBackwardMatchTheReference) {
  auto cu = templates();
  for (int d : {1, 45, 513})
    for (auto order : kOrders) {
      const int rows = 3;
      uint32_t seed = d + (order == simt::Order::reverse ? 7 : 0);
      auto x = values(static_cast<size_t>(rows) * d, seed, 6.0f);
      auto dy = values(x.size(), seed + 1);
      Reference r;
      NodeId y = ops::softmax(r.g, r.param("x", {rows, d}, x), -1);
      auto [want_y, want_grads] = r.run(y, dy);
      std::vector<float> got_y(x.size(), -7.0f), got_dx(x.size(), -7.0f);
      cu->launch("sx_softmax_fwd_f32", {unsigned(rows)}, {kRowBlock}, order, got_y.data(),
                 static_cast<const float*>(x.data()), d);
      expect_close(got_y, want_y, 1e-5, "softmax y d=" + std::to_string(d));
      cu->launch("sx_softmax_bwd_f32", {unsigned(rows)}, {kRowBlock}, order, got_dx.data(),
                 static_cast<const float*>(dy.data()), static_cast<const float*>(got_y.data()), d);
      expect_close(got_dx, want_grads["x"], 1e-5, "softmax dx d=" + std::to_string(d));
    }
}

TEST(CrossEntropyTemplate, LossAndGradientInOneRowKernel) {
  auto cu = templates();
  for (int vocab : {2, 97, 600})
    for (auto order : kOrders) {
      const int rows = 5;
      uint32_t seed = vocab + (order == simt::Order::reverse ? 3 : 0);
      auto logits = values(static_cast<size_t>(rows) * vocab, seed, 4.0f);
      std::vector<int32_t> targets(rows);
      for (int i = 0; i < rows; ++i) targets[i] = (i * 37 + vocab / 3) % vocab;
      Reference r;
      NodeId loss = ops::cross_entropy(r.g, r.param("logits", {rows, vocab}, logits), r.ids("t", {rows}, targets));
      auto [want_loss, want_grads] = r.run(loss, {});
      std::vector<float> loss_rows(rows, -7.0f), mean(1, -7.0f), dlogits(logits.size(), -7.0f);
      float dloss = 1.0f;
      cu->launch("sx_cross_entropy_f32", {unsigned(rows)}, {kRowBlock}, order, loss_rows.data(), dlogits.data(),
                 static_cast<const float*>(logits.data()), static_cast<const int*>(targets.data()),
                 static_cast<const float*>(&dloss), 1.0f / rows, vocab);
      cu->launch("sx_mean_rows", {1}, {kRowBlock}, order, mean.data(), static_cast<const float*>(loss_rows.data()),
                 rows);
      expect_close(mean, want_loss, 1e-5, "cross-entropy loss vocab=" + std::to_string(vocab));
      expect_close(dlogits, want_grads["logits"], 1e-5, "cross-entropy dlogits vocab=" + std::to_string(vocab));
    }
}

struct AttentionCase {
  int batch, tq, tk, d, dv;
  bool causal;
};
class AttentionTemplates : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(AttentionTemplates, ForwardAndBackwardMatchTheReference) {
  auto [batch, tq, tk, d, dv, causal] = GetParam();
  auto cu = templates();
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  for (auto order : kOrders) {
    uint32_t seed = 11 * tq + tk + (order == simt::Order::reverse ? 1000 : 0);
    auto q = values(static_cast<size_t>(batch) * tq * d, seed + 1, 1.5f);
    auto k = values(static_cast<size_t>(batch) * tk * d, seed + 2, 1.5f);
    auto v = values(static_cast<size_t>(batch) * tk * dv, seed + 3);
    auto dout = values(static_cast<size_t>(batch) * tq * dv, seed + 4);
    Reference r;
    NodeId y = ops::attention(r.g, r.param("q", {batch, tq, d}, q), r.param("k", {batch, tk, d}, k),
                              r.param("v", {batch, tk, dv}, v), causal, scale);
    auto [want_out, want_grads] = r.run(y, dout);

    std::vector<float> out(dout.size(), -7.0f), lse(static_cast<size_t>(batch) * tq, -7.0f), delta(lse.size());
    std::vector<float> dq(q.size(), -7.0f), dk(k.size(), -7.0f), dvv(v.size(), -7.0f);
    auto cq = static_cast<const float*>(q.data()), ck = static_cast<const float*>(k.data()),
         cv = static_cast<const float*>(v.data()), cdout = static_cast<const float*>(dout.data());
    int c = causal;
    cu->launch("sx_attention_fwd_f32", {unsigned(batch * tq)}, {kRowBlock}, order, out.data(), lse.data(), cq, ck, cv,
               tq, tk, d, dv, scale, c);
    expect_close(out, want_out, 1e-5, "attention out");
    cu->launch("sx_attention_bwd_q_f32", {unsigned(batch * tq)}, {kRowBlock}, order, dq.data(), delta.data(), cdout,
               static_cast<const float*>(out.data()), cq, ck, cv, static_cast<const float*>(lse.data()), tq, tk, d, dv,
               scale, c);
    cu->launch("sx_attention_bwd_kv_f32", {unsigned(batch * tk)}, {kRowBlock}, order, dk.data(), dvv.data(), cdout, cq,
               ck, cv, static_cast<const float*>(lse.data()), static_cast<const float*>(delta.data()), tq, tk, d, dv,
               scale, c);
    expect_close(dq, want_grads["q"], 1e-5, "attention dq");
    expect_close(dk, want_grads["k"], 1e-5, "attention dk");
    expect_close(dvv, want_grads["v"], 1e-5, "attention dv");
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionTemplates,
                         ::testing::Values(AttentionCase{2, 5, 5, 8, 6, true}, AttentionCase{1, 3, 7, 4, 4, false},
                                           AttentionCase{2, 4, 6, 16, 8, true}, AttentionCase{1, 2, 300, 4, 3, true}));

}  // namespace
}  // namespace sx::cuda::test
