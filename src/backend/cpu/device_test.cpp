// The device interface on every registered device: buffers by model path,
// microbatch accumulation on the device, the first non-finite gradient, and
// the update (runtime/optimizer.cpp's) on device-owned buffers.
#include <gtest/gtest.h>

#include "autodiff/autodiff.h"
#include "backend/cpu/test_util.h"
#include "lang/experiment.h"

namespace sx::cpu::testing {
namespace {

using namespace ops;

// loss = sum((x @ a.w) * b.w): both params get a gradient that depends on the batch.
struct TwoParams {
  Graph g;
  NodeId loss;
  Gradients grads;
  plan::Plan plan;
  TwoParams() {
    NodeId x = input(g, "x", {3, 4}, DType::F32);
    NodeId a = param(g, "a.w", {4, 2}, {}), b = param(g, "b.w", {2}, {});
    loss = sum_all(g, mul(g, matmul(g, x, a), b));
    grads = backward(g, loss);
    plan = plan::make_plan(g, {loss, grads.params.at("a.w"), grads.params.at("b.w")});
  }
};

std::vector<float> randoms(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

OptimizerSpec sgd(double lr) {
  OptimizerSpec s;
  s.kind = "sgd";
  s.lr = std::make_shared<ScheduleSpec>();
  s.lr->value = lr;
  return s;
}

class EveryDevice : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryDevice, ParamsAndOptimizerStateGoUpAndDownByPath) {
  TwoParams m;
  OptimizerSpec adamw = sgd(0.1);
  adamw.kind = "adamw";
  auto d = backend::make_device(GetParam(), {.threads = 2});
  d->allocate(params_of(m.g), &adamw);
  EXPECT_EQ(d->name(), GetParam());
  EXPECT_EQ(d->download("b.w"), std::vector<float>(2, 0.0f));  // zero until uploaded
  EXPECT_EQ(d->optimizer_state_names(),
            (std::vector<std::string>{"adamw.m/a.w", "adamw.m/b.w", "adamw.v/a.w", "adamw.v/b.w"}));
  auto w = randoms(8, 1);
  d->upload("a.w", w);
  EXPECT_EQ(d->download("a.w"), w);
  d->upload_optimizer_state("adamw.v/b.w", {3, 4});
  EXPECT_EQ(d->download_optimizer_state("adamw.v/b.w"), (std::vector<float>{3, 4}));
}

// Two microbatches: the step's gradient is 0 + g1 * 0.5 + g2 * 0.5, summed on
// the device; SGD at lr 1 applies it as p + -1 * g, so the parameters after
// the update give it back (to the rounding by which a device's products
// differ from the reference's).
TEST_P(EveryDevice, MicrobatchesAccumulateTheMeanGradientOnTheDevice) {
  TwoParams m;
  OptimizerSpec opt = sgd(1.0);
  auto d = backend::make_device(GetParam(), {.threads = 2});
  d->allocate(params_of(m.g), &opt);
  std::map<std::string, std::vector<float>> before = {{"a.w", randoms(8, 2)}, {"b.w", randoms(2, 3)}};
  for (const auto& [path, v] : before) d->upload(path, v);
  backend::GraphHandle h = d->load(m.g, m.plan, m.grads.params);
  std::vector<std::vector<float>> batches = {randoms(12, 4), randoms(12, 5)};

  // Each microbatch's gradient, from the reference, for the expected sum.
  std::map<std::string, std::vector<float>> want;
  for (const auto& [path, v] : before) want[path].assign(v.size(), 0.0f);
  for (size_t j = 0; j < batches.size(); ++j) {
    ref::Feeds<float> f;
    f.inputs["x"] = ref::Tensor<float>::of(Shape{3, 4}, batches[j]);
    for (const auto& [path, v] : before) f.params[path] = ref::Tensor<float>::of(Shape{int64_t(v.size())}, v);
    f.params["a.w"].shape = Shape{4, 2};
    auto r = ref::evaluate<float>(m.g, f, m.plan.outputs);
    for (auto& [path, g] : want)
      for (size_t i = 0; i < g.size(); ++i) g[i] += r[m.grads.params.at(path)].f[i] * 0.5f;

    d->run(h, {{"x", batches[j].data()}}, 0);
    EXPECT_TRUE(std::isfinite(d->scalar(h, m.loss)));
    d->accumulate_gradients(h, static_cast<int64_t>(j), 2);
  }
  EXPECT_EQ(d->first_nonfinite_gradient(), std::nullopt);
  d->update(1, 1.0, false);
  for (const auto& [path, p] : before) {
    std::vector<float> after = d->download(path), expect(p.size());
    for (size_t i = 0; i < p.size(); ++i) expect[i] = p[i] + -1.0f * (want[path][i] + 0.0f);
    for (size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(after[i], expect[i], 1e-6) << path << " " << i;
  }
}

// Kept scalars are what scalar() gives after each run, in the order kept,
// however many (past the cuda device's first slots), and each call gives
// only those kept since the last.
TEST_P(EveryDevice, KeptScalarsAreEachRunsScalarsInOrder) {
  TwoParams m;
  auto d = backend::make_device(GetParam(), {.threads = 2});
  d->allocate(params_of(m.g), nullptr);
  d->upload("a.w", randoms(8, 6));
  d->upload("b.w", randoms(2, 7));
  backend::GraphHandle h = d->load(m.g, m.plan);
  std::vector<float> want;
  for (uint32_t run = 0; run < 40; ++run) {
    std::vector<float> x = randoms(12, 10 + run);
    d->run(h, {{"x", x.data()}}, 0);
    want.insert(want.end(), 2, d->scalar(h, m.loss));
    d->keep_scalars(h, {m.loss, m.loss});
  }
  std::vector<float> got = d->kept_scalars();
  EXPECT_EQ(got, want);
  EXPECT_TRUE(d->kept_scalars().empty());
  d->keep_scalars(h, {m.loss});
  EXPECT_EQ(d->kept_scalars(), std::vector<float>{want.back()});
}

// The first parameter in model-path order whose gradient is not finite.
TEST_P(EveryDevice, NamesTheFirstNonFiniteGradient) {
  TwoParams m;
  OptimizerSpec opt = sgd(0.1);
  auto d = backend::make_device(GetParam(), {.threads = 1});
  d->allocate(params_of(m.g), &opt);
  d->upload("a.w", randoms(8, 6));
  d->upload("b.w", randoms(2, 7));
  backend::GraphHandle h = d->load(m.g, m.plan, m.grads.params);
  std::vector<float> x = randoms(12, 8);
  x[0] = INFINITY;  // d a.w[0, :] = x[:, 0]^T b is infinite; d b.w = sum(x @ a) too
  d->run(h, {{"x", x.data()}}, 0);
  d->accumulate_gradients(h, 0, 1);
  EXPECT_EQ(d->first_nonfinite_gradient(), std::optional<std::string>("a.w"));
}

INSTANTIATE_TEST_SUITE_P(Devices, EveryDevice, ::testing::ValuesIn(backend::device_names()));

// The cpu device's step is bit-identical for any thread count, as the
// runtime's resume across machines needs.
TEST(CpuDevice, AStepIsTheSameBitsForAnyThreadCount) {
  std::vector<std::vector<float>> results;
  for (int threads : {1, 3}) {
    TwoParams m;
    OptimizerSpec opt = sgd(0.5);
    opt.kind = "adamw";
    opt.clip = 0.01;
    auto d = backend::make_device("cpu", {.threads = threads});
    d->allocate(params_of(m.g), &opt);
    d->upload("a.w", randoms(8, 9));
    d->upload("b.w", randoms(2, 10));
    backend::GraphHandle h = d->load(m.g, m.plan, m.grads.params);
    for (int64_t j = 0; j < 3; ++j) {
      auto x = randoms(12, 11 + static_cast<uint32_t>(j));
      d->run(h, {{"x", x.data()}}, 0);
      d->accumulate_gradients(h, j, 3);
    }
    StepStats s = d->update(1, 0.5, true);
    EXPECT_GT(s.grad_norm, 0.01);  // clipped
    EXPECT_EQ(s.param_update_ratio.size(), 2u);
    results.push_back(d->download("a.w"));
  }
  EXPECT_EQ(std::memcmp(results[0].data(), results[1].data(), results[0].size() * 4), 0);
}

}  // namespace
}  // namespace sx::cpu::testing
