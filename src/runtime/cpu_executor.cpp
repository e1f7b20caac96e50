#include "backend/cpu/executor.h"

#include <cstring>

#include "runtime/executor.h"

namespace sx {

namespace {

class FastCpuExecutor : public Executor {
 public:
  FastCpuExecutor(const Graph& g, const plan::Plan& p, int threads) : g_(g), ex_(g, p, threads) {}

  void run(const std::vector<std::pair<std::string, const int32_t*>>& inputs, const ParamStore& params,
           uint64_t rng_offset) override {
    if (!bound_) {
      // The optimizer updates parameters in place, so the buffers stay where they are.
      for (const auto& [path, values] : params.values) ex_.bind_param(path, values.data());
      bound_ = true;
    }
    for (const auto& [name, data] : inputs) {
      void* slot = ex_.input(name);
      NodeId id = g_.find_input(name);
      if (slot && id != kNoNode) std::memcpy(slot, data, static_cast<size_t>(g_.node(id).shape.numel()) * 4);
    }
    ex_.run(rng_offset);
  }

  const float* output(NodeId id) const override { return ex_.f32(id); }

 private:
  const Graph& g_;
  cpu::CpuExecutor ex_;
  bool bound_ = false;
};

}  // namespace

std::unique_ptr<Executor> make_cpu_executor(const Graph& g, const plan::Plan& p, int threads) {
  return std::make_unique<FastCpuExecutor>(g, p, threads);
}

}  // namespace sx
