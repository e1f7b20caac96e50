#pragma once
// The run's state: what a step boundary has reached (counters, loader
// positions, the last evals, the passes still due, the stage) and its one
// form on disk, a checkpoint's state.json (checkpoints.md).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/timing.h"

namespace sx {

namespace ckpt {
struct ResumeState;
}

using Json = nlohmann::ordered_json;

// Float32 values widened to double, as every record prints them.
inline double f32(double x) { return static_cast<double>(static_cast<float>(x)); }

// A checkpoint written (or resumed from) by this run: its step and path.
struct CheckpointRef {
  int64_t step = 0;
  std::string path;
};

// What state.json records besides the state: the run it belongs to.
struct StateIdentity {
  int64_t seed = 0;
  int threads = 0;
  Json knobs, optimizer;
  std::string slug, graph_hash;
};

struct RunState {
  int64_t step = 0;        // the last completed step
  int64_t first_step = 0;  // this session's starting step (the resume step)
  int64_t in_flight = 0;   // the step being computed, 0 between steps
  int64_t stage = 0, records = 0, tokens = 0;
  float train_loss = 0;
  double lr_scale = 1.0;
  std::string loader;                                     // the current stage's training loader
  Json positions;                                         // the loaders' positions after `step` (null before one)
  std::vector<std::string> pending_passes;                // due at `step` and not yet run
  std::vector<std::pair<std::string, double>> last_eval;  // "eval/loss", "probe:eval/loss", first seen first
  std::optional<CheckpointRef> last_checkpoint;
  std::optional<Stopwatch> loop_clock;  // from the step loop's start (before the step-0 pass)

  void set_last_eval(const std::string& key, double v);
  Json eval_json() const;
  Json counters_json() const { return {{"records", records}, {"tokens", tokens}}; }
  Json train_loss_json() const { return step > 0 ? Json(f32(train_loss)) : Json(nullptr); }
  double elapsed_s() const { return loop_clock ? loop_clock->seconds() : 0.0; }

  // state.json's fields, in its order; `current_positions` when no step has run in this session.
  Json to_state_json(const StateIdentity& id, const Json& current_positions) const;
  // The counters, stage, loader, last evals and training loss of a checked state.json (the step
  // is the checkpoint's). The passes still due and the loader positions are the caller's to apply.
  void restore(const ckpt::ResumeState& saved, int64_t checkpoint_step);
};

}  // namespace sx
