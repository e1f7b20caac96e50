#pragma once
// What a curriculum stage's :when may read, and the check that it reads
// nothing else.
#include <functional>
#include <string>
#include <vector>

#include "lang/experiment.h"

namespace sx {

// The names bound when a :when is evaluated: the watched pass's metrics
// (eval/loss, eval/<metric>...), then step and train/loss.
std::vector<std::string> stage_condition_names(const std::vector<std::string>& pass_metrics);

// E-DEF-011 at the first name a stage's :when reads that is neither bound
// then nor defined by the file. `pass_metrics` gives a pass's metric names.
void check_stage_conditions(Interp& in, const Experiment& x,
                            const std::function<std::vector<std::string>(const std::string&)>& pass_metrics);

}  // namespace sx
