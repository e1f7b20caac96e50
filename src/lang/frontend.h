#pragma once
// The front end as one call: read and evaluate an experiment file under a
// selection, and finalize it into a validated Experiment.
#include <memory>
#include <string>

#include "lang/experiment.h"
#include "lang/selection.h"

namespace sx {

// The interpreter stays alive with the experiment: the model is a closure the
// tracer calls later. Throws UserError for anything the user can fix.
// `display` is how errors name the file (a bundle's "b.sxb:exp/run.sx"); empty: `file`.
std::unique_ptr<Interp> load_experiment(const std::string& file, const Selection& sel, int64_t eval_limit,
                                        const std::atomic<bool>* stop_flag = nullptr,
                                        const std::string& display = {});

}  // namespace sx
