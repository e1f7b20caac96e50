// The one place device names are written: each name with the function that
// makes its device. The runtime asks for a device by the name it was given.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "backend/device.h"
#include "util/error.h"

namespace sx::backend {

std::unique_ptr<Device> make_cpu_device(std::string_view name, const DeviceOptions& options);
std::unique_ptr<Device> make_ref_device(std::string_view name, const DeviceOptions& options);
std::unique_ptr<Device> make_cuda_device(std::string_view name, const DeviceOptions& options);

namespace {

struct Registered {
  const char* name;
  std::unique_ptr<Device> (*make)(std::string_view, const DeviceOptions&);
};

// "cpu" first: the default. "ref" (the reference backend) is for tests only:
// the command line offers cpu and cuda (emulated with SEXPGPU_CUDA_EMULATE=1).
constexpr Registered kDevices[] = {{"cpu", make_cpu_device}, {"ref", make_ref_device}, {"cuda", make_cuda_device}};

}  // namespace

namespace {
[[noreturn]] void no_node_gradients(std::string_view device) {
  throw UserError(Code::NODE_007, {}, fmt::format("device {} cannot exchange its gradients with other nodes", device),
                  "train on several nodes with --device cpu or --device cuda");
}
}  // namespace

void Device::keep_scalars(GraphHandle graph, const std::vector<NodeId>& ids) {
  for (NodeId id : ids) kept_.push_back(scalar(graph, id));
}
std::vector<float> Device::kept_scalars() { return std::exchange(kept_, {}); }

size_t Device::step_gradient_size() const { no_node_gradients(name()); }
void Device::read_step_gradient(float*) const { no_node_gradients(name()); }
void Device::write_step_gradient(const float*) { no_node_gradients(name()); }

std::vector<std::string> device_names() {
  std::vector<std::string> names;
  for (const auto& d : kDevices) names.emplace_back(d.name);
  return names;
}

std::unique_ptr<Device> make_device(std::string_view name, const DeviceOptions& options) {
  for (const auto& d : kDevices)
    if (name == d.name) return d.make(name, options);
  SX_ASSERT(false, "make_device: no device of that name is registered");
  return nullptr;
}

}  // namespace sx::backend
