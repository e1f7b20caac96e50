#include "backend/ref/ref.h"
#include "runtime/executor.h"

namespace sx {

namespace {

class RefExecutor : public Executor {
 public:
  RefExecutor(const Graph& g, std::vector<NodeId> outputs) : g_(g), outputs_(std::move(outputs)) {}

  void run(const std::vector<std::pair<std::string, const int32_t*>>& inputs, const ParamStore& params,
           uint64_t rng_offset) override {
    ref::Feeds<float> feeds;
    feeds.rng_offset = rng_offset;
    for (const auto& [name, data] : inputs) {
      NodeId id = g_.find_input(name);
      if (id == kNoNode) continue;
      const Node& n = g_.node(id);
      feeds.inputs[name] = ref::Tensor<float>::ints(n.shape, std::vector<int32_t>(data, data + n.shape.numel()));
    }
    for (const auto& [path, id] : g_.params())
      feeds.params[path] = ref::Tensor<float>::of(g_.node(id).shape, params.values.at(path));
    values_ = ref::evaluate<float>(g_, feeds, outputs_);
    // Integer outputs (argmax, ids) are read as floats like every other output.
    for (NodeId id : outputs_)
      if (values_[id].f.empty() && !values_[id].i.empty())
        values_[id].f.assign(values_[id].i.begin(), values_[id].i.end());
  }

  const float* output(NodeId id) const override { return values_.at(id).f.data(); }

 private:
  const Graph& g_;
  std::vector<NodeId> outputs_;
  std::vector<ref::Tensor<float>> values_;
};

}  // namespace

std::unique_ptr<Executor> make_ref_executor(const Graph& g, std::vector<NodeId> outputs) {
  return std::make_unique<RefExecutor>(g, std::move(outputs));
}

}  // namespace sx
