#pragma once
// defrun :init-from: a .safetensors file whose tensors, named by model path,
// replace the freshly initialised parameters.
#include <string>

#include "runtime/params.h"
#include "util/source.h"

namespace sx {

struct RunDecl;

// Replaces every parameter's values with the file's tensor of the same model
// path (F32, F16, BF16 or F64, read as float32). The file must hold exactly
// the model's parameters with their shapes: otherwise one E-CKPT-007 error
// lists every difference (missing, extra, shape, dtype), one note each. A
// missing, unreadable or corrupt file is E-CKPT-001..006. `span` (may be
// invalid) is where errors point; `shown` names the file in messages (the
// path when empty).
void apply_init_from(ParamStore& params, const std::string& path, Span span = {},
                     const std::string& shown = {});

// The run's :init-from, a path relative to `base_dir` (the experiment file's
// folder) unless absolute; errors point at the defrun's :init-from value.
// s3:// URIs are E-CKPT-008 in this version.
void apply_init_from(ParamStore& params, const RunDecl& run, const std::string& base_dir);

}  // namespace sx
