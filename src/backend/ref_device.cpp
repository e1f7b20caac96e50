// The ref device: each run evaluates the graph with the reference backend
// (the definition of every op; slow), on the device's host buffers. Not a
// user device: it checks the interface and the fast devices in tests.
#include "backend/host_device.h"
#include "backend/ref/ref.h"

namespace sx::backend {

std::unique_ptr<Device> make_ref_device(std::string_view name, const DeviceOptions& options);

namespace {

class RefDevice : public HostMemoryDevice {
 public:
  explicit RefDevice(std::string_view name) : name_(name) {}
  std::string_view name() const override { return name_; }

  GraphHandle load(const Graph& g, const plan::Plan& p, std::map<std::string, NodeId> gradients) override {
    graphs_.push_back({&g, p.outputs, {}});
    return add_gradients(std::move(gradients));
  }

  void run(GraphHandle graph, const DeviceInputs& inputs, uint64_t rng_offset) override {
    Loaded& l = graphs_.at(static_cast<size_t>(graph));
    ref::Feeds<float> feeds;
    feeds.rng_offset = rng_offset;
    for (const auto& [name, data] : inputs) {
      NodeId id = l.g->find_input(name);
      if (id == kNoNode) continue;
      const Node& n = l.g->node(id);
      auto n_elems = static_cast<size_t>(n.shape.numel());
      if (is_float(n.dtype)) {
        const float* f = static_cast<const float*>(data);
        feeds.inputs[name] = ref::Tensor<float>::of(n.shape, std::vector<float>(f, f + n_elems));
      } else {
        const int32_t* i = static_cast<const int32_t*>(data);
        feeds.inputs[name] = ref::Tensor<float>::ints(n.shape, std::vector<int32_t>(i, i + n_elems), n.dtype);
      }
    }
    for (const auto& [path, id] : l.g->params())
      feeds.params[path] = ref::Tensor<float>::of(l.g->node(id).shape, params_.values.at(path));
    l.values = ref::evaluate<float>(*l.g, feeds, l.outputs);
    // Integer outputs (argmax, ids) are read as floats like every other output.
    for (NodeId id : l.outputs)
      if (l.values[id].f.empty() && !l.values[id].i.empty())
        l.floats[id].assign(l.values[id].i.begin(), l.values[id].i.end());
  }

  ref::Tensor<float> read(GraphHandle graph, NodeId id) const override {
    return graphs_.at(static_cast<size_t>(graph)).values.at(id);
  }

 protected:
  const float* output(GraphHandle graph, NodeId id) const override {
    const Loaded& l = graphs_.at(static_cast<size_t>(graph));
    auto it = l.floats.find(id);
    return it != l.floats.end() ? it->second.data() : l.values.at(id).f.data();
  }

 private:
  struct Loaded {
    const Graph* g;
    std::vector<NodeId> outputs;
    std::vector<ref::Tensor<float>> values;
    std::map<NodeId, std::vector<float>> floats;  // integer outputs as floats
  };
  std::string name_;
  std::vector<Loaded> graphs_;
};

}  // namespace

std::unique_ptr<Device> make_ref_device(std::string_view name, const DeviceOptions&) {
  return std::make_unique<RefDevice>(name);
}

}  // namespace sx::backend
