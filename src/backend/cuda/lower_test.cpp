#include "backend/cuda/lower.h"

#include <gtest/gtest.h>

#include "testing/gpt_step.h"

namespace sx::cuda {
namespace {

// std/nn's gpt training step (forward, loss, every parameter's gradient), optionally in bf16.
std::unique_ptr<cpu::GptStep> gpt_step(int64_t layers, bool bf16 = false) {
  return cpu::gpt_step({.batch = 2, .seq = 16, .vocab = 64, .d = 32, .heads = 4, .layers = layers}, bf16);
}

int count(const Lowering& l, LaunchKind k) {
  int n = 0;
  for (const auto& x : l.launches) n += x.kind == k;
  return n;
}

// The target: at most 32 launches per layer and 2 for the optimizer. f32
// reaches 30 (q, k and v one grouped product; their bias gradients one
// column kernel), bf16 32 (GELU, applied to the rounded pre-activation,
// and its gradient's multiply are kernels of their own). The bounds hold
// what is reached so that fusion cannot regress.
TEST(CudaLowering, GptStepLaunchesPerLayerAndTheOptimizerAtMostTwo) {
  for (bool bf16 : {false, true}) {
    auto two = gpt_step(2, bf16), three = gpt_step(3, bf16);
    OptimizerInfo opt{.present = true, .clip = true, .tensors = 10, .elements = 1000};
    Lowering a = lower(two->g, two->plan, bf16 ? Precision::bf16 : Precision::f32, opt);
    Lowering b = lower(three->g, three->plan, bf16 ? Precision::bf16 : Precision::f32, opt);
    int per_layer = static_cast<int>(b.launches.size() - a.launches.size());
    EXPECT_GT(per_layer, 0);
    EXPECT_LE(per_layer, bf16 ? 32 : 30) << (bf16 ? "bf16" : "f32");
    EXPECT_LE(count(a, LaunchKind::Optimizer), 2);
    EXPECT_EQ(count(a, LaunchKind::Attention), 2);
    EXPECT_GT(a.cublas(), 0);
  }
}

TEST(CudaLowering, TheSameGraphGivesTheSameLaunches) {
  auto s1 = gpt_step(2), s2 = gpt_step(2);
  Lowering a = lower(s1->g, s1->plan, Precision::f32), b = lower(s2->g, s2->plan, Precision::f32);
  ASSERT_EQ(a.launches.size(), b.launches.size());
  for (size_t i = 0; i < a.launches.size(); ++i) {
    EXPECT_EQ(a.launches[i].name, b.launches[i].name);
    EXPECT_EQ(a.launches[i].nodes, b.launches[i].nodes);
  }
}

// Every computed node is in exactly one launch, and a launch reads only
// values that earlier launches (or feeds, params, inline constants) made.
TEST(CudaLowering, LaunchesCoverEveryNodeOnceInADependencyOrder) {
  auto s = gpt_step(2, true);
  Lowering l = lower(s->g, s->plan, Precision::bf16);
  std::vector<int> launch_of(s->g.size(), -1);
  for (size_t i = 0; i < l.launches.size(); ++i)
    for (NodeId id : l.launches[i].nodes) {
      EXPECT_EQ(launch_of[id], -1) << "node " << id << " in two launches";
      launch_of[id] = static_cast<int>(i);
    }
  for (size_t i = 0; i < l.launches.size(); ++i)
    for (NodeId in : l.launches[i].inputs)
      if (launch_of[in] >= 0) {
        EXPECT_LT(launch_of[in], static_cast<int>(i)) << l.launches[i].name;
      }
  // Layers share kernels: fewer distinct kernels than generated launches.
  EXPECT_LT(l.distinct_kernels(), l.generated());
}

}  // namespace
}  // namespace sx::cuda
