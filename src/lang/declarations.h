#pragma once
// Shared between the declaration forms, the spec builtins and finalize.
#include <string>
#include <vector>

#include "lang/experiment.h"
#include "lang/run_settings.h"

namespace sx {

// The one knob precedence: --set (of `sets`, the effective ones) over the
// variant over the default; a --set's text is parsed as the knob's type.
KnobValue chosen_knob_value(const KnobDecl& k, const VariantDecl* variant,
                            const std::vector<std::pair<std::string, std::string>>& sets);

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
