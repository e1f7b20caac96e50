#pragma once
// What a resume says about what changed (checkpoints.md): every difference
// between the checkpoint's knob manifest and this selection, classed refused,
// notable or safe.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lang/experiment.h"

namespace sx {

struct ResumeDifference {
  std::string cls;   // "refused", "notable", "safe"
  std::string what;  // a knob name, "graph", "threads"
  std::string from, to;
  std::string line() const { return "resume: " + cls + " " + what + " " + from + " -> " + to; }
};

// The optimizer as state.json records it: its kind, then every value of the
// spec (the schedule's as "lr.<field>"), so a resume can say what changed even
// when the file changed a literal rather than a knob.
nlohmann::ordered_json optimizer_json(const OptimizerSpec& o);

// `state` is the checkpoint's state.json; `graph_hashes`: this model's graph
// hash at each :precision (a change of precision alone is notable, though the
// bf16 graph has its own hash). Sorted: refused first, then notable, then
// safe; by name within a class.
std::vector<ResumeDifference> resume_differences(const nlohmann::ordered_json& state, const Experiment& x,
                                                 const std::map<std::string, std::string>& graph_hashes, int threads);

}  // namespace sx
