#pragma once
// The optimizers and learning-rate schedules, with PyTorch's definitions
// (torch.optim.AdamW / Adam / SGD, clip_grad_norm_), operation for operation,
// so a run from the same weights on the same records follows PyTorch's curve
// to float32 rounding.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/device.h"  // StepStats
#include "lang/experiment.h"
#include "runtime/params.h"

namespace sx {

// The learning rate of the update of step k (1-based) of `steps`, before the curriculum's scale.
double schedule_lr(const ScheduleSpec& s, int64_t k, int64_t steps);

class Optimizer {
 public:
  Optimizer(const OptimizerSpec& spec, const std::vector<ParamInfo>& params);
  // One update of every parameter from its gradient (by path, as many floats
  // as the parameter, read only: the clip factor applies as they are read).
  // `k` is the step (1-based), `lr` the rate for it.
  StepStats step(ParamStore& params, const std::map<std::string, const float*>& grads, int64_t k, double lr,
                 bool want_stats);

  // State for checkpoints: "adamw.m/<path>", "adamw.v/<path>", "sgd.momentum/<path>".
  // (The map may be changed through it: the slots are looked up again.)
  std::map<std::string, std::vector<float>>& state() {
    slots_.clear();
    return state_;
  }
  const OptimizerSpec& spec() const { return spec_; }
  // How many threads an update may use (the cpu device's; default 1). Each
  // element's update reads and writes that element alone, so how the
  // elements are shared out changes no value.
  void set_threads(int threads) { threads_ = threads > 1 ? threads : 1; }

 private:
  OptimizerSpec spec_;
  int threads_ = 1;
  std::map<std::string, bool> decays_;  // per path: whether weight decay applies
  std::map<std::string, std::vector<float>> state_;
  // Per parameter, in path order, what step() reads of the maps above: the
  // keys built and searched per parameter each step were 1.5% of the tiny
  // gpt's step. Built on the first step and after state() (slots_for).
  struct Slot {
    std::string path;
    std::vector<float>*m = nullptr, *v = nullptr;  // SGD's momentum (or none) in m
    bool decays = false;
  };
  std::vector<Slot> slots_;
  const std::vector<Slot>& slots_for(const ParamStore& params);
};

// The optimizer's own diagnostics, grad/norm and update/ratio, as the run's
// :diagnostics select them: whether any is, and their entries in a step's record.
bool wants_optimizer_taps(const RunDecl& run);
void add_optimizer_taps(const RunDecl& run, const StepStats& stats, nlohmann::ordered_json& rec);

}  // namespace sx
