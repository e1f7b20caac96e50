#pragma once
// What the runtime needs of a device (in the manner of ggml's ggml_backend_i):
// the device owns every buffer of a run — parameters, gradients, optimizer
// state, each graph's arena — and the runtime moves only batches in and
// scalars out. Whole tensors cross only by model path, for initialisation,
// :init-from, checkpoints and resume. A step is
//
//   for j in microbatches: run(train, batch j); accumulate_gradients(train, j, m)
//   first_nonfinite_gradient(); update(k, lr)
//
// so the gradients never leave the device (docs/devices.md, "How a device works").
// Devices are made by name (backend::make_device); the runtime never names one.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/ref/tensor.h"
#include "graph/graph.h"
#include "plan/plan.h"

namespace sx {

struct ParamInfo;
struct OptimizerSpec;

// What an update reports when asked (the taps grad/norm/<path> and update/ratio/<path>).
struct StepStats {
  double grad_norm = 0;                              // the global norm before clipping (0 unless clipping or stats)
  std::map<std::string, double> param_grad_norm;     // per parameter, for grad/norm/<path>
  std::map<std::string, double> param_update_ratio;  // |update| / |param|, for update/ratio/<path>
};

namespace backend {

// A graph loaded on a device.
using GraphHandle = int;

// A batch input by name; 4 bytes an element, as many as the input node has.
using DeviceInputs = std::vector<std::pair<std::string, const void*>>;

struct DeviceOptions {
  int threads = 1;                // the cpu's; results do not depend on it
  std::string precision = "f32";  // the run's :precision (cuda: tf32 products)
  int ordinal = -1;               // cuda: the CUDA ordinal of this rank; -1: SEXPGPU_DEVICES' first
};

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string_view name() const = 0;

  // ---- buffers ----------------------------------------------------------------
  // Makes the parameters (zero until uploaded), their gradients and, with an
  // optimizer, its state (zero). Once, before any graph is loaded.
  virtual void allocate(const std::vector<ParamInfo>& params, const OptimizerSpec* optimizer) = 0;
  // A parameter by model path, as many floats as it has.
  virtual void upload(const std::string& path, const std::vector<float>& values) = 0;
  virtual std::vector<float> download(const std::string& path) const = 0;
  // The optimizer's state by checkpoint name ("adamw.m/<path>", "sgd.momentum/<path>"), in name order.
  virtual std::vector<std::string> optimizer_state_names() const = 0;
  virtual void upload_optimizer_state(const std::string& name, const std::vector<float>& values) = 0;
  virtual std::vector<float> download_optimizer_state(const std::string& name) const = 0;

  // ---- graphs -----------------------------------------------------------------
  // A planned graph that reads the device's parameters. `gradients` (by model
  // path: the node of each parameter's gradient) makes it a training graph.
  // The graph must outlive the device.
  virtual GraphHandle load(const Graph& g, const plan::Plan& p, std::map<std::string, NodeId> gradients = {}) = 0;
  // Computes the graph's outputs from the batch and the current parameters.
  virtual void run(GraphHandle graph, const DeviceInputs& inputs, uint64_t rng_offset) = 0;
  // A scalar output of the last run, as float (integer outputs converted).
  virtual float scalar(GraphHandle graph, NodeId id) const = 0;
  // A whole output of the last run, copied back (tests and debugging only).
  virtual ref::Tensor<float> read(GraphHandle graph, NodeId id) const = 0;
  // A step's reported scalars, read once a step rather than once a
  // microbatch (a read waits for the device to finish; the next
  // microbatch's inputs are read and copied meanwhile): keep_scalars puts
  // the values of scalar outputs `ids` of the last run of `graph` aside, in
  // order, as scalar() would give them; kept_scalars gives every value kept
  // since it was last called, in the order kept. The base class reads each
  // at once; a device that runs asynchronously copies them aside on itself.
  virtual void keep_scalars(GraphHandle graph, const std::vector<NodeId>& ids);
  virtual std::vector<float> kept_scalars();

  // ---- the training step --------------------------------------------------------
  // After run() of microbatch j (0-based) of m of a training graph: the step's
  // gradient is the gradient of the mean of the microbatches' losses, summed
  // on the device in microbatch order (one microbatch: its gradient as it is).
  virtual void accumulate_gradients(GraphHandle train, int64_t j, int64_t m) = 0;
  // The first parameter (in model-path order) whose step gradient has a
  // non-finite element, if any.
  virtual std::optional<std::string> first_nonfinite_gradient() const = 0;
  // The optimizer's update of step k (1-based) at rate `lr` from the step's
  // gradient (runtime/optimizer.h: PyTorch's definitions, clipping included).
  virtual StepStats update(int64_t k, double lr, bool want_stats) = 0;

  // ---- several nodes (runtime/node_step.h) ----------------------------------------
  // The step's gradient as one vector, every parameter in model-path order:
  // read after the last accumulate_gradients, written back summed over the
  // nodes (or GPUs) before first_nonfinite_gradient() and update(). A device
  // that cannot answers E-NODE-007.
  virtual size_t step_gradient_size() const;
  virtual void read_step_gradient(float* out) const;
  virtual void write_step_gradient(const float* in);

 private:
  std::vector<float> kept_;  // the base class's keep_scalars
};

// The devices this build has, by name ("cpu" first: the default).
std::vector<std::string> device_names();
// A name not in device_names() is a bug (the command line refuses it first, E-DEV-001).
std::unique_ptr<Device> make_device(std::string_view name, const DeviceOptions& options);

}  // namespace backend
}  // namespace sx
