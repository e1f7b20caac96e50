#include "runtime/node_step.h"

#include <cstring>

namespace sx {

// One node's block: [int64 signal][doubles: loss, metrics, taps][gradient: f32 or bf16].
int StepExchange::exchange(backend::Device& device, StepSums& sums, int stop_signal) {
  const size_t scalars = 1 + sums.metrics.size() + sums.taps.size();
  const size_t n = gradient_crosses_ ? device.step_gradient_size() : 0;
  const size_t width = wire_ == GradientPrecision::bf16 ? sizeof(uint16_t) : sizeof(float);
  const size_t head = sizeof(int64_t) + scalars * sizeof(double);
  const size_t block = head + n * width;
  const size_t ranks = static_cast<size_t>(comm_.size());
  mine_.resize(block);
  all_.resize(block * ranks);
  gradient_.resize(n);

  int64_t sig = stop_signal;
  std::vector<double> values = {sums.loss};
  values.insert(values.end(), sums.metrics.begin(), sums.metrics.end());
  values.insert(values.end(), sums.taps.begin(), sums.taps.end());
  std::memcpy(mine_.data(), &sig, sizeof sig);
  std::memcpy(mine_.data() + sizeof sig, values.data(), scalars * sizeof(double));
  if (n) device.read_step_gradient(gradient_.data());
  char* g = mine_.data() + head;
  if (wire_ == GradientPrecision::bf16)
    for (size_t i = 0; i < n; ++i) {
      uint16_t b = to_bf16_bits(gradient_[i]);
      std::memcpy(g + i * 2, &b, 2);
    }
  else if (n)  // memcpy from an empty vector's null data is undefined even for 0 bytes
    std::memcpy(g, gradient_.data(), n * sizeof(float));

  comm_.all_gather(mine_.data(), block, all_.data());

  int first = 0;
  std::vector<double> total(scalars, 0.0);
  std::fill(gradient_.begin(), gradient_.end(), 0.0f);
  for (size_t r = 0; r < ranks; ++r) {
    const char* b = all_.data() + r * block;
    std::memcpy(&sig, b, sizeof sig);
    if (!first && sig) first = static_cast<int>(sig);
    std::memcpy(values.data(), b + sizeof sig, scalars * sizeof(double));
    for (size_t i = 0; i < scalars; ++i) total[i] += values[i];
    const char* rg = b + head;
    if (wire_ == GradientPrecision::bf16)
      for (size_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, rg + i * 2, 2);
        gradient_[i] += from_bf16_bits(h);
      }
    else
      for (size_t i = 0; i < n; ++i) {
        float x;
        std::memcpy(&x, rg + i * 4, 4);
        gradient_[i] += x;
      }
  }
  if (first) return first;
  sums.loss = total[0];
  for (size_t i = 0; i < sums.metrics.size(); ++i) sums.metrics[i] = total[1 + i];
  for (size_t i = 0; i < sums.taps.size(); ++i) sums.taps[i] = total[1 + sums.metrics.size() + i];
  if (n) device.write_step_gradient(gradient_.data());
  return 0;
}

void open_node_exchange(NodeExchange& out, Communicator& nodes, bool group_spans_nodes, backend::Device& lead,
                        const Environment& env) {
  if (group_spans_nodes) {
    out.step.emplace(nodes, env.node_gradients, /*gradient=*/false);
  } else if (env.device == Device::cuda && env.cuda_emulate == 0) {  // bootstrapped through the nodes' Gloo
    out.nccl = nccl_across_nodes(nodes, lead, env.node_timeout_s);
    out.step.emplace(*out.nccl.comm, env.node_gradients);
  } else {
    out.step.emplace(nodes, env.node_gradients);
  }
}

}  // namespace sx
