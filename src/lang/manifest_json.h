#pragma once
// Knob values and the manifest as JSON, as the metrics `meta` line, the status
// file, checkpoints and `knobs --json` carry them.
#include <nlohmann/json.hpp>

#include "lang/experiment.h"

namespace sx {
// Integers and floats as numbers, strings and symbols as strings, booleans, nil as null.
nlohmann::ordered_json to_json(const Value& v);
// [{"name": ..., "value": ..., "source": ...}, ...]
nlohmann::ordered_json manifest_json(const Experiment& x);
}  // namespace sx
