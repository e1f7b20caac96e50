// The optimizer's update on several threads against one: the same bits, for
// every optimizer kind, with clipping and weight decay, over parameters whose
// shares cut through them.
#include "runtime/optimizer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace sx {
namespace {

struct Model {
  std::vector<ParamInfo> info;
  ParamStore params;
  std::map<std::string, std::vector<float>> grads;
};

// Three parameters, 800K elements in all (three shares of the update's
// 256K at the least: up to three threads), with sizes that no share
// boundary lands on evenly.
Model model(uint32_t seed) {
  Model m;
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  for (auto [path, count] : {std::pair<const char*, int64_t>{"a.w", 400001}, {"b.bias", 37}, {"c.w", 399999}}) {
    ParamInfo p;
    p.path = path;
    p.shape = Shape{count};
    m.info.push_back(p);
    auto& v = m.params.values[path];
    auto& g = m.grads[path];
    for (int64_t i = 0; i < count; ++i) v.push_back(n(rng)), g.push_back(n(rng));
  }
  m.params.info = m.info;
  return m;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

void expect_same_bits_on_any_threads(const OptimizerSpec& spec) {
  std::vector<Model> runs;
  std::vector<Optimizer> optimizers;
  for (int threads : {1, 2, 3, 8}) {
    runs.push_back(model(7));
    optimizers.emplace_back(spec, runs.back().info);
    optimizers.back().set_threads(threads);
  }
  for (int64_t k = 1; k <= 3; ++k)
    for (size_t r = 0; r < runs.size(); ++r) {
      std::map<std::string, const float*> grads;
      for (const auto& [path, g] : runs[r].grads) grads[path] = g.data();
      optimizers[r].step(runs[r].params, grads, k, 1e-2, false);
    }
  for (size_t r = 1; r < runs.size(); ++r) {
    for (const auto& [path, v] : runs[0].params.values)
      EXPECT_TRUE(same_bits(v, runs[r].params.values.at(path))) << spec.kind << " " << path << " run " << r;
    for (const auto& [name, s] : optimizers[0].state())
      EXPECT_TRUE(same_bits(s, optimizers[r].state().at(name))) << spec.kind << " " << name << " run " << r;
  }
  // And the update did something.
  EXPECT_FALSE(same_bits(runs[0].params.values.at("a.w"), model(7).params.values.at("a.w")));
}

TEST(Optimizer, ThreadsGiveTheSameBits) {
  OptimizerSpec adamw;
  adamw.kind = "adamw";
  adamw.weight_decay = 0.1;
  adamw.no_decay = {"*.bias"};
  expect_same_bits_on_any_threads(adamw);
  adamw.clip = 0.5;  // the gradients' norm is about 900: every step clips
  expect_same_bits_on_any_threads(adamw);
  OptimizerSpec adam;
  adam.kind = "adam";
  expect_same_bits_on_any_threads(adam);
  OptimizerSpec sgd;
  sgd.kind = "sgd";
  sgd.momentum = 0.9;
  sgd.nesterov = true;
  sgd.weight_decay = 0.01;
  expect_same_bits_on_any_threads(sgd);
  sgd.momentum = 0;
  expect_same_bits_on_any_threads(sgd);
}

}  // namespace
}  // namespace sx
