// The cpu device: each graph is a cpu::CpuExecutor over its plan's arena,
// reading the parameters in place from the device's host buffers.
#include <cstring>

#include "backend/cpu/executor.h"
#include "backend/host_device.h"

namespace sx::backend {

std::unique_ptr<Device> make_cpu_device(std::string_view name, const DeviceOptions& options);

namespace {

class CpuDevice : public HostMemoryDevice {
 public:
  CpuDevice(std::string_view name, int threads) : name_(name), threads_(threads) {}
  std::string_view name() const override { return name_; }

  GraphHandle load(const Graph& g, const plan::Plan& p, std::map<std::string, NodeId> gradients) override {
    auto ex = std::make_unique<cpu::CpuExecutor>(g, p, threads_);
    // The update writes the parameters in place, so the buffers stay where they are.
    for (const auto& [path, values] : params_.values) ex->bind_param(path, values.data());
    graphs_.push_back({&g, std::move(ex)});
    return add_gradients(std::move(gradients));
  }

  void run(GraphHandle graph, const DeviceInputs& inputs, uint64_t rng_offset) override {
    Loaded& l = graphs_.at(static_cast<size_t>(graph));
    for (const auto& [name, data] : inputs) {
      void* slot = l.ex->input(name);
      NodeId id = l.g->find_input(name);
      size_t bytes = id != kNoNode ? static_cast<size_t>(l.g->node(id).shape.numel()) * 4 : 0;
      if (slot && bytes > 0) std::memcpy(slot, data, bytes);  // an empty input may have no data at all
    }
    l.ex->run(rng_offset);
  }

  ref::Tensor<float> read(GraphHandle graph, NodeId id) const override {
    return graphs_.at(static_cast<size_t>(graph)).ex->tensor(id);
  }

 protected:
  const float* output(GraphHandle graph, NodeId id) const override {
    return graphs_.at(static_cast<size_t>(graph)).ex->f32(id);
  }
  int update_threads() const override { return threads_; }

 private:
  struct Loaded {
    const Graph* g;
    std::unique_ptr<cpu::CpuExecutor> ex;
  };
  std::string name_;
  int threads_;
  std::vector<Loaded> graphs_;
};

}  // namespace

std::unique_ptr<Device> make_cpu_device(std::string_view name, const DeviceOptions& options) {
  return std::make_unique<CpuDevice>(name, options.threads);
}

}  // namespace sx::backend
