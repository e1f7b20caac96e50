#include "runtime/run_state.h"

#include "checkpoint/resume_state.h"
#include "runtime/records.h"
#include "util/version.h"

namespace sx {

void RunState::set_last_eval(const std::string& key, double v) {
  for (auto& [k, old] : last_eval)
    if (k == key) {
      old = v;
      return;
    }
  last_eval.emplace_back(key, v);
}

Json RunState::eval_json() const {
  Json e = Json::object();
  for (const auto& [k, v] : last_eval) e[k] = v;
  return e;
}

Json RunState::to_state_json(const StateIdentity& id, const Json& current_positions) const {
  return {{"step", step},
          {"counters", counters_json()},
          {"stage", stage},
          {"loader", loader},
          {"loaders", positions.is_null() ? current_positions : positions},
          {"rng", {{"generator", "philox4x32-10"}, {"seed", id.seed}, {"dropout_offset", "step << 16 | microbatch"}}},
          {"passes_due", pending_passes},
          {"train_loss", train_loss_json()},
          {"eval", eval_json()},
          {"threads", id.threads},
          {"knobs", id.knobs},
          {"slug", id.slug},
          {"graph", id.graph_hash},
          {"optimizer", id.optimizer},
          {"version", SEXPGPU_VERSION},
          {"written_at", rfc3339_now()}};
}

void RunState::restore(const ckpt::ResumeState& saved, int64_t checkpoint_step) {
  step = first_step = checkpoint_step;
  records = saved.records;
  tokens = saved.tokens;
  stage = saved.stage;
  loader = saved.loader;
  if (saved.train_loss) train_loss = *saved.train_loss;
  for (const auto& [k, v] : saved.eval) set_last_eval(k, v);
}

}  // namespace sx
