#include "backend/host_device.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "util/error.h"

namespace sx::backend {

void HostMemoryDevice::allocate(const std::vector<ParamInfo>& params, const OptimizerSpec* optimizer) {
  params_.info = params;
  for (const auto& p : params) {
    params_.values[p.path].assign(static_cast<size_t>(p.shape.numel()), 0.0f);
    step_gradient_[p.path] = nullptr;
  }
  if (optimizer) {
    optimizer_ = std::make_unique<Optimizer>(*optimizer, params);
    optimizer_->set_threads(update_threads());
  }
}

void HostMemoryDevice::upload(const std::string& path, const std::vector<float>& values) {
  auto& v = params_.values.at(path);
  SX_ASSERT(v.size() == values.size(), "a parameter uploaded with the wrong size");
  // Assigned in place: loaded graphs hold pointers to these buffers.
  std::copy(values.begin(), values.end(), v.begin());
}

std::vector<float> HostMemoryDevice::download(const std::string& path) const { return params_.values.at(path); }

std::vector<std::string> HostMemoryDevice::optimizer_state_names() const {
  std::vector<std::string> names;
  if (optimizer_)
    for (const auto& [name, v] : optimizer_->state()) names.push_back(name);
  return names;
}

void HostMemoryDevice::upload_optimizer_state(const std::string& name, const std::vector<float>& values) {
  auto& v = optimizer_->state().at(name);
  SX_ASSERT(v.size() == values.size(), "optimizer state uploaded with the wrong size");
  std::copy(values.begin(), values.end(), v.begin());
}

std::vector<float> HostMemoryDevice::download_optimizer_state(const std::string& name) const {
  return optimizer_->state().at(name);
}

GraphHandle HostMemoryDevice::add_gradients(std::map<std::string, NodeId> gradients) {
  gradients_.push_back(std::move(gradients));
  return static_cast<GraphHandle>(gradients_.size() - 1);
}

void HostMemoryDevice::accumulate_gradients(GraphHandle train, int64_t j, int64_t m) {
  const auto& nodes = gradients_.at(static_cast<size_t>(train));
  // One microbatch: the graph's output is the step's gradient, read in place.
  if (m == 1) {
    for (auto& [path, g] : step_gradient_) g = output(train, nodes.at(path));
    return;
  }
  const float scale = 1.0f / static_cast<float>(m);
  for (const auto& [path, values] : params_.values) {
    auto& sum = sums_[path];
    if (j == 0) sum.assign(values.size(), 0.0f);
    const float* d = output(train, nodes.at(path));
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += d[i] * scale;
  }
  for (auto& [path, g] : step_gradient_) g = sums_.at(path).data();
}

namespace {
// Whether x[0..n) holds an inf or a NaN (an exponent of all ones): a loop
// without an early exit, which g++ vectorises (isfinite's branch per
// element was 2% of a tiny model's step).
bool any_nonfinite(const float* x, size_t n) {
  uint32_t any = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, x + i, sizeof bits);
    any |= (bits & 0x7f800000u) == 0x7f800000u;
  }
  return any != 0;
}
}  // namespace

std::optional<std::string> HostMemoryDevice::first_nonfinite_gradient() const {
  for (const auto& [path, g] : step_gradient_)
    if (any_nonfinite(g, params_.values.at(path).size())) return path;
  return std::nullopt;
}

size_t HostMemoryDevice::step_gradient_size() const {
  size_t n = 0;
  for (const auto& [path, values] : params_.values) n += values.size();
  return n;
}

void HostMemoryDevice::read_step_gradient(float* out) const {
  for (const auto& [path, g] : step_gradient_) {
    size_t n = params_.values.at(path).size();
    std::copy(g, g + n, out);
    out += n;
  }
}

// Into the sums (the graph's own outputs stay as the run left them).
void HostMemoryDevice::write_step_gradient(const float* in) {
  for (auto& [path, g] : step_gradient_) {
    auto& sum = sums_[path];
    sum.assign(in, in + params_.values.at(path).size());
    in += sum.size();
    g = sum.data();
  }
}

StepStats HostMemoryDevice::update(int64_t k, double lr, bool want_stats) {
  SX_ASSERT(optimizer_, "update() on a device allocated without an optimizer");
  return optimizer_->step(params_, step_gradient_, k, lr, want_stats);
}

}  // namespace sx::backend
