#pragma once
// A device whose memory is the host's (cpu, ref): parameters, gradients and
// optimizer state are host vectors this class owns, the update is
// runtime/optimizer.cpp's. A derived device says how it runs a graph and
// where an output is after the run.
#include <memory>

#include "backend/device.h"
#include "runtime/optimizer.h"
#include "runtime/params.h"

namespace sx::backend {

class HostMemoryDevice : public Device {
 public:
  void allocate(const std::vector<ParamInfo>& params, const OptimizerSpec* optimizer) override;
  void upload(const std::string& path, const std::vector<float>& values) override;
  std::vector<float> download(const std::string& path) const override;
  std::vector<std::string> optimizer_state_names() const override;
  void upload_optimizer_state(const std::string& name, const std::vector<float>& values) override;
  std::vector<float> download_optimizer_state(const std::string& name) const override;

  void accumulate_gradients(GraphHandle train, int64_t j, int64_t m) override;
  std::optional<std::string> first_nonfinite_gradient() const override;
  StepStats update(int64_t k, double lr, bool want_stats) override;
  size_t step_gradient_size() const override;
  void read_step_gradient(float* out) const override;
  void write_step_gradient(const float* in) override;

  float scalar(GraphHandle graph, NodeId id) const override { return output(graph, id)[0]; }

 protected:
  // An output's values after run (numel of the node's shape, as floats).
  virtual const float* output(GraphHandle graph, NodeId id) const = 0;
  // The gradient nodes of a training graph, as given to load().
  GraphHandle add_gradients(std::map<std::string, NodeId> gradients);
  // Threads the optimizer's update may use (Optimizer::set_threads).
  virtual int update_threads() const { return 1; }
  ParamStore params_;  // the parameters live here: graphs read them in place

 private:
  std::vector<std::map<std::string, NodeId>> gradients_;  // per graph handle
  std::map<std::string, std::vector<float>> sums_;        // the sum over microbatches (with more than one)
  std::map<std::string, const float*> step_gradient_;     // the step's gradients, as the optimizer reads them
  std::unique_ptr<Optimizer> optimizer_;
};

}  // namespace sx::backend
