#pragma once
// The driver's own steps between the stages' calls (driver/compile.cpp).
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "driver/compile.h"
#include "util/interrupted.h"

namespace sx {

// The taps the diagnostics globs select, as "<name>/<model path>"; a glob
// that selects nothing is warned about on standard error.
void select_diagnostics(StepGraph& step, const std::vector<std::string>& globs);

// The memory plan of what the step must compute: loss, metrics, selected taps
// and gradients; nodes none of them needs are pruned.
void plan_step(StepGraph& step, const std::atomic<bool>* stop);

// An evaluation pass traced at its batch, at the run's precision, on the
// training graph's parameters (E-SHAPE-007 otherwise), and planned.
PassGraph pass_graph(const Compiled& c, const std::shared_ptr<EvalDecl>& decl, const std::atomic<bool>* stop);

// The metrics a curriculum condition can read from `pass`: eval/loss and
// eval/<metric>, none when there is no such pass.
std::vector<std::string> pass_metric_names(const Compiled& c, const std::string& pass);

// E-SHAPE-031 when a training step's parameters, optimizer state,
// accumulators and plan arenas together exceed the memory budget.
void check_fits_in_memory(const Compiled& c);

// graph_hash and graph_hashes: what a checkpoint must agree on to be resumed.
void hash_identity(Compiled& c);

}  // namespace sx
