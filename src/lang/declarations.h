#pragma once
// Shared between the declaration forms, the spec builtins and finalize.
#include <string>
#include <vector>

#include "lang/experiment.h"

namespace sx {

// The run's own settings that are knobs too: steps, batch, microbatches, seed,
// precision, checkpoint-every, eval-every, diagnostics.
const std::vector<std::string>& run_setting_names();
// A run setting as a knob: its type and range (`precision` one of f32, bf16, tf32;
// `seed` and `eval-every` at least 0; the other integers at least 1).
KnobDecl run_setting_decl(const std::string& name, ValueP dflt, Span at);

// The value `(knob name)` has now: --set, else the selected variant, else the default.
ValueP current_knob_value(Interp& in, const std::string& name, Span at);

Params parse_params(Interp& in, const Value& vec, const std::string& form);

// tokenizers (chars, bpe), optimizers (adamw adam sgd), schedules (constant
// warmup-cosine linear-decay), vocab.
void register_spec_builtins(Interp& in);

// Evaluates the kept declarations under the selection and validates the whole
// experiment: the manifest, the run, loaders, passes, curriculum, the slug.
// Evaluates a loader's keys (once): `(vocab train)` may need it before finalize.
void finalize_loader(Interp& in, LoaderDecl& l);

void finalize(Interp& in, const Selection& sel, const std::string& file);

}  // namespace sx
