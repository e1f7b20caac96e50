#pragma once
// Checks autodiff against float64 central differences (a test helper, header
// only). Operands are params with random values; the graph is
// loss = sum(y * W) with W random, so every element of y's gradient matters.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "autodiff/autodiff.h"
#include "backend/ref/ref.h"
#include "graph/build.h"

namespace sx::gradcheck {

struct GradCheck {
  Graph g;
  ref::Feeds<double> feeds;
  std::mt19937_64 rng{12345};

  GradCheck() { g.builtin_taps = false; }

  // A param of uniform values in [lo, hi].
  NodeId operand(const Shape& s, double lo = -1, double hi = 1) {
    std::uniform_real_distribution<double> u(lo, hi);
    std::vector<double> v(s.numel());
    for (double& x : v) x = u(rng);
    return operand_of(s, v);
  }
  // A param whose values are at least `min_abs` from 0 (for kinks and poles).
  NodeId away_from_zero(const Shape& s, double min_abs = 0.2, double max_abs = 1.5) {
    std::uniform_real_distribution<double> u(min_abs, max_abs);
    std::bernoulli_distribution sign(0.5);
    std::vector<double> v(s.numel());
    for (double& x : v) x = sign(rng) ? u(rng) : -u(rng);
    return operand_of(s, v);
  }
  NodeId operand_of(const Shape& s, const std::vector<double>& v) {
    std::string path = "p" + std::to_string(feeds.params.size());
    feeds.params[path] = ref::Tensor<double>::of(s, v);
    return ops::param(g, path, s.vec(), {});
  }
  NodeId ids(const Shape& s, int32_t n) {
    std::uniform_int_distribution<int32_t> u(0, n - 1);
    std::vector<int32_t> v(s.numel());
    for (int32_t& x : v) x = u(rng);
    return ids_of(s, v);
  }
  NodeId ids_of(const Shape& s, const std::vector<int32_t>& v) {
    std::string name = "i" + std::to_string(feeds.inputs.size());
    feeds.inputs[name] = ref::Tensor<double>::ints(s, v);
    return ops::input(g, name, s.vec(), DType::I32);
  }
  NodeId constant(const Shape& s) {
    std::normal_distribution<double> n;
    std::vector<double> v(s.numel());
    for (double& x : v) x = n(rng);
    std::string name = "i" + std::to_string(feeds.inputs.size());
    feeds.inputs[name] = ref::Tensor<double>::of(s, v);
    return ops::input(g, name, s.vec(), DType::F32);
  }

  // loss = sum(y * W); returns the loss node.
  NodeId weighted_loss(NodeId y) {
    if (g.node(y).shape.rank == 0) return y;
    return ops::sum_all(g, ops::mul(g, y, constant(g.node(y).shape)));
  }

  double loss_value(NodeId loss) { return ref::evaluate(g, feeds, {loss})[loss].f[0]; }

  // Compares every element of every param's gradient with (f(x+h) - f(x-h)) / 2h.
  void check(NodeId y, double rtol = 1e-6, double atol = 1e-8, double h = 1e-6) {
    NodeId loss = weighted_loss(y);
    Gradients grads = backward(g, loss);
    std::vector<NodeId> outs;
    for (const auto& [path, id] : grads.params) outs.push_back(id);
    auto vals = ref::evaluate(g, feeds, outs);
    for (const auto& [path, gid] : grads.params) {
      std::vector<double>& x = feeds.params[path].f;
      const std::vector<double>& analytic = vals[gid].f;
      ASSERT_EQ(analytic.size(), x.size()) << path;
      for (size_t k = 0; k < x.size(); ++k) {
        double keep = x[k];
        x[k] = keep + h;
        double up = loss_value(loss);
        x[k] = keep - h;
        double down = loss_value(loss);
        x[k] = keep;
        double numeric = (up - down) / (2 * h), a = analytic[k];
        EXPECT_LE(std::abs(a - numeric), rtol * std::max(std::abs(a), std::abs(numeric)) + atol)
            << path << "[" << k << "]: autodiff " << a << ", finite differences " << numeric;
      }
    }
  }
};

}  // namespace sx::gradcheck
