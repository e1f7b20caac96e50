#pragma once
// The defrun settings that are knobs too (steps, batch, ...): the one table of
// their types, defaults, ranges and what a resume may change, read by the
// declarations, finalize, `sexpgpu knobs` and the resume check.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lang/experiment.h"

namespace sx {

// What a resume says when a setting differs from the checkpoint's (checkpoints.md).
enum class ResumeClass {
  refused,                     // the data order or the parameters would not be the checkpoint's
  notable,                     // future steps compute differently
  safe,                        // only when and what is reported
  notable_with_step_schedule,  // notable when the learning rate's schedule reads the steps, else safe
};

struct RunSetting {
  const char* name;
  const char* type;                  // "integer", "symbol", "string"
  const char* dflt;                  // the value without a defrun key, as written; nullptr: none
  std::optional<int64_t> min;        // integers
  std::vector<const char*> choices;  // symbols
  bool nullable;                     // nil means "none"
  ResumeClass resume;
};

// In the manifest's order: steps, batch, microbatches, seed, precision,
// checkpoint-every, eval-every, diagnostics.
const std::vector<RunSetting>& run_settings();
const RunSetting* run_setting(const std::string& name);  // nullptr: not a run setting
const std::vector<std::string>& run_setting_names();

// The value without a defrun key: dflt read as its type, nil when none.
ValueP run_setting_default(const RunSetting& s);
// A run setting as a knob: its type and range, with `dflt` as the default.
KnobDecl run_setting_decl(const std::string& name, ValueP dflt, Span at);

}  // namespace sx
