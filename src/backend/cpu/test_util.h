#pragma once
// Shared by the CPU backend's tests and the every-device op tests: random
// feeds for a graph, running it on the reference, the CPU backend and every
// registered device, and comparing them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string_view>

#include "backend/cpu/executor.h"
#include "backend/device.h"
#include "backend/ref/ref.h"
#include "graph/build.h"
#include "plan/plan.h"
#include "runtime/params.h"

namespace sx::cpu::testing {

// A graph with random inputs and params, fed alike to both backends.
struct Case {
  Graph g;
  ref::Feeds<float> feeds;
  std::mt19937 rng{1234};

  NodeId in(const Shape& s, float lo = -2, float hi = 2) {
    std::string name = "in" + std::to_string(feeds.inputs.size());
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<float> v(s.numel());
    for (float& x : v) x = u(rng);
    feeds.inputs[name] = ref::Tensor<float>::of(s, v);
    return ops::input(g, name, s.vec(), DType::F32);
  }
  // A parameter at a fresh model path with uniform values in [lo, hi].
  NodeId param(const Shape& s, float lo = -2, float hi = 2) {
    std::string path = "p" + std::to_string(feeds.params.size());
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<float> v(s.numel());
    for (float& x : v) x = u(rng);
    feeds.params[path] = ref::Tensor<float>::of(s, v);
    return ops::param(g, path, s.vec(), {});
  }
  NodeId ids(const Shape& s, int32_t below, DType dtype = DType::I32) {
    std::string name = "in" + std::to_string(feeds.inputs.size());
    std::uniform_int_distribution<int32_t> u(0, below - 1);
    std::vector<int32_t> v(s.numel());
    for (int32_t& x : v) x = u(rng);
    feeds.inputs[name] = ref::Tensor<float>::ints(s, v, dtype);
    return ops::input(g, name, s.vec(), dtype);
  }
  // Gives every param of the graph random values (normal, std `std`).
  void fill_params(float std = 0.5f) {
    std::normal_distribution<float> n(0, std);
    for (const auto& [path, id] : g.params()) {
      if (feeds.params.count(path)) continue;
      std::vector<float> v(g.node(id).shape.numel());
      for (float& x : v) x = n(rng);
      feeds.params[path] = ref::Tensor<float>::of(g.node(id).shape, v);
    }
  }
  Feeds cpu_feeds() const {
    Feeds f;
    for (const auto& [k, t] : feeds.inputs) f.inputs[k] = is_float(t.dtype) ? (const void*)t.f.data() : t.i.data();
    for (const auto& [k, t] : feeds.params) f.params[k] = t.f.data();
    f.rng_offset = feeds.rng_offset;
    return f;
  }
  // The outputs computed by the CPU backend with `threads` threads.
  std::vector<ref::Tensor<float>> cpu(const std::vector<NodeId>& outs, int threads, plan::Options o = {}) {
    plan::Plan p = plan::make_plan(g, outs, o);
    CpuExecutor ex(g, p, threads);
    ex.run(cpu_feeds());
    std::vector<ref::Tensor<float>> r;
    for (NodeId id : outs) r.push_back(ex.tensor(id));
    return r;
  }
  // The outputs computed by the registered device `name`, the params uploaded
  // to it by model path, as the runtime does.
  std::vector<ref::Tensor<float>> on_device(const std::string& name, const std::vector<NodeId>& outs, int threads,
                                            const std::string& precision = "f32") {
    auto d = backend::make_device(name, {.threads = threads, .precision = precision});
    d->allocate(params_of(g), nullptr);
    for (const auto& [path, t] : feeds.params) d->upload(path, t.f);
    backend::GraphHandle h = d->load(g, plan::make_plan(g, outs));
    backend::DeviceInputs inputs;
    for (const auto& [k, t] : feeds.inputs)
      inputs.emplace_back(k, is_float(t.dtype) ? (const void*)t.f.data() : t.i.data());
    d->run(h, inputs, feeds.rng_offset);
    std::vector<ref::Tensor<float>> r;
    for (NodeId id : outs) r.push_back(d->read(h, id));
    return r;
  }
};

// |cpu - ref| <= rtol (|ref| + max |ref| of the tensor): relative, with a
// floor for elements that cancel to near zero (and `atol`, for tensors that
// are all rounding noise, like a gradient that is zero in exact arithmetic).
// Ints must be equal.
inline void expect_close(const ref::Tensor<float>& got, const ref::Tensor<float>& want, double rtol,
                         const std::string& what, double atol = 0) {
  ASSERT_EQ(got.shape, want.shape) << what;
  ASSERT_EQ(got.dtype, want.dtype) << what;
  if (!is_float(want.dtype)) {
    EXPECT_EQ(got.i, want.i) << what;
    return;
  }
  double scale = 0;
  for (float v : want.f)
    if (std::isfinite(v)) scale = std::max(scale, std::fabs(double(v)));
  int bad = 0;
  for (size_t k = 0; k < want.f.size() && bad < 5; ++k) {
    double w = want.f[k], g = got.f[k];
    if (std::isnan(w) || std::isinf(w)) {
      bool same = std::isnan(w) ? std::isnan(g) : g == w;
      if (!same) ++bad, ADD_FAILURE() << what << " element " << k << ": cpu " << g << ", ref " << w;
      continue;
    }
    if (!(std::fabs(g - w) <= rtol * (std::fabs(w) + scale) + atol))
      ++bad, ADD_FAILURE() << what << " element " << k << " of " << want.shape.str() << ": cpu " << g << ", ref " << w
                           << " (scale " << scale << ")";
  }
}

inline bool same_bits(const ref::Tensor<float>& a, const ref::Tensor<float>& b) {
  return a.shape == b.shape && a.i == b.i && a.f.size() == b.f.size() &&
         (a.f.empty() || std::memcmp(a.f.data(), b.f.data(), a.f.size() * 4) == 0);  // memcmp of nullptr is UB
}

// The cuda device of these tests is the emulated GPU, unless the caller set
// SEXPGPU_CUDA_EMULATE=0 (scripts/gpu_check.sh on a GPU machine): then it is
// the real GPU, whose exp, tanh and cuBLASLt sums are its own, so what is
// bit for bit against the reference here is 1e-5 there, and the bf16 bound
// is the 1e-2 rather than the emulation's bits.
inline const bool kEmulateCuda = setenv("SEXPGPU_CUDA_EMULATE", "1", 0) == 0;
inline bool cuda_is_real_gpu() {
  const char* v = std::getenv("SEXPGPU_CUDA_EMULATE");
  return v && std::string_view(v) == "0";
}

// Compares `outs` (named `names`) with the reference (exactly when `exact`):
// on every registered device, and on the cpu backend under two thread counts
// and with views, folded transposes and in-place reuse both on and off.
inline void check_every_device(Case& c, const std::vector<NodeId>& outs, const std::vector<std::string>& names,
                               double rtol = 1e-5, bool exact = false, double atol = 0) {
  c.fill_params();
  auto want = ref::evaluate<float>(c.g, c.feeds, outs);
  for (const std::string& device : backend::device_names()) {
    auto got = c.on_device(device, outs, 2);
    for (size_t k = 0; k < outs.size(); ++k) {
      std::string what = device + ": " + names[k];
      if (exact && device == "cuda" && cuda_is_real_gpu())
        expect_close(got[k], want[outs[k]], 1e-5, what, atol);
      else if (exact)
        EXPECT_TRUE(same_bits(got[k], want[outs[k]])) << what << " differs from the reference";
      else
        expect_close(got[k], want[outs[k]], rtol, what, atol);
    }
  }
  auto one = c.cpu(outs, 1);
  auto three = c.cpu(outs, 3);
  auto plain = c.cpu(outs, 2, {.in_place = false, .alias = false, .fold_transpose = false});
  for (size_t k = 0; k < outs.size(); ++k) {
    const std::string& what = names[k];
    if (exact)
      EXPECT_TRUE(same_bits(one[k], want[outs[k]])) << what << " differs from the reference";
    else
      expect_close(one[k], want[outs[k]], rtol, what, atol);
    EXPECT_TRUE(same_bits(one[k], three[k])) << what << " differs between 1 and 3 threads";
    EXPECT_TRUE(same_bits(one[k], plain[k])) << what << " differs without views and in-place reuse";
  }
}

}  // namespace sx::cpu::testing
