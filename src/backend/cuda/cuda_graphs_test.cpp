// The device's CUDA graphs on the emulated GPU, whose capture records calls
// as a real one does (a replay runs them again with the memory of the
// replay, and an upload or a download inside a capture is an assert): steps
// replayed from captured graphs give the bits of eager launches, with the
// rng offset, the learning rate and the step's bias correction varying from
// step to step, over microbatches, with clipping, and with a pass between.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "autodiff/autodiff.h"
#include "backend/cuda/cuda_device.h"
#include "graph/build.h"
#include "graph/params.h"
#include "lang/experiment.h"
#include "plan/plan.h"

namespace sx::cuda {
namespace {

using namespace ops;

// loss = sum(dropout(tanh(x @ w + b))^2): a product, a draw, a bias.
struct Model {
  Graph g;
  NodeId loss = kNoNode, eval_loss = kNoNode;
  Gradients grads;
  plan::Plan train, eval;
  Model() {
    NodeId x = input(g, "x", {4, 8}, DType::F32);
    NodeId w = param(g, "w", {8, 8}, {}), b = param(g, "b", {8}, {});
    NodeId h = tanh(g, add(g, matmul(g, x, w), b));
    NodeId y = dropout(g, h, 0.5, 7, 1);
    loss = sum_all(g, mul(g, y, y));
    eval_loss = sum_all(g, mul(g, h, h));
    grads = backward(g, loss);
    std::vector<NodeId> outs{loss};
    for (const auto& [path, id] : grads.params) outs.push_back(id);
    train = plan::make_plan(g, outs);
    eval = plan::make_plan(g, {eval_loss});
  }
};

struct Trace {
  std::vector<uint32_t> losses;  // the bits of every microbatch's loss and every eval
  std::map<std::string, std::vector<float>> params;
  CudaReport::GraphCounters graphs;
};

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

Trace train(bool capture) {
  capture_cuda_graphs(capture);
  Model m;
  auto d = make_cuda_device_on(make_emulated_gpu(int64_t{1} << 30), Precision::f32);
  OptimizerSpec spec;
  spec.kind = "adamw", spec.clip = 0.5, spec.weight_decay = 0.1;
  d->allocate(params_of(m.g), &spec);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  auto randoms = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
  };
  d->upload("w", randoms(64));
  d->upload("b", randoms(8));
  backend::GraphHandle t = d->load(m.g, m.train, m.grads.params);
  backend::GraphHandle e = d->load(m.g, m.eval);
  Trace out;
  for (int64_t k = 1; k <= 5; ++k) {
    for (int64_t j = 0; j < 2; ++j) {
      std::vector<float> x = randoms(32);
      d->run(t, {{"x", x.data()}}, static_cast<uint64_t>(100 * k + j));
      out.losses.push_back(bits(d->scalar(t, m.loss)));
      d->accumulate_gradients(t, j, 2);
    }
    EXPECT_EQ(d->first_nonfinite_gradient(), std::nullopt);
    d->update(k, 0.01 * static_cast<double>(k), k == 4);  // step 4 also measures (eager in between)
    std::vector<float> x = randoms(32);
    d->run(e, {{"x", x.data()}}, 0);
    out.losses.push_back(bits(d->scalar(e, m.eval_loss)));
  }
  for (const std::string& path : {"w", "b"}) out.params[path] = d->download(path);
  out.graphs = dynamic_cast<const CudaReport&>(*d).graph_counters();
  capture_cuda_graphs(true);
  return out;
}

TEST(CudaGraphs, ReplayedStepsGiveTheBitsOfEagerLaunches) {
  Trace eager = train(false), replayed = train(true);
  EXPECT_EQ(eager.graphs.captured, 0);
  EXPECT_EQ(eager.graphs.replays, 0);
  // Captured from each sequence's second run: the graph, the sum of the first
  // and of a later microbatch, the scan, the update and the pass.
  EXPECT_EQ(replayed.graphs.captured, 6);
  EXPECT_GT(replayed.graphs.replays, 20);
  EXPECT_EQ(replayed.losses, eager.losses);
  EXPECT_EQ(replayed.params, eager.params);
  // The draws differ from microbatch to microbatch: a replay did not keep its capture's rng offset.
  EXPECT_NE(eager.losses[0], eager.losses[1]);
}

}  // namespace
}  // namespace sx::cuda
