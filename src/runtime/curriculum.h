#pragma once
// The curriculum's conditions (language.md, "curriculum"): when the run moves
// to its next stage.
#include <cstdint>
#include <optional>
#include <string>

#include "runtime/run_state.h"

namespace sx {

class Interp;
struct StageDecl;

// Evaluates the next stage's :when after the pass `pass` at step `step`, with
// the pass's metrics (their last values), `step` and `train/loss` bound. When
// it holds: the condition with the values it read, as the stage line and event
// show it ("eval/loss 2.43120 < 2.5").
std::optional<std::string> stage_condition_met(Interp& interp, const StageDecl& next, const std::string& pass,
                                               int64_t step, const RunState& state);

}  // namespace sx
