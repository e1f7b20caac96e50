#pragma once
// The compile driver: from an experiment file and a selection to everything a
// run needs — the validated experiment, the training-step graph with its
// gradients, each pass's graph, the parameters. `check`, `explain` and the
// run's session call it; it opens no device and reads no data.
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autodiff/autodiff.h"
#include "graph/params.h"
#include "lang/frontend.h"
#include "lang/trace.h"
#include "plan/plan.h"
#include "util/environment.h"

namespace sx {

// A selected diagnostic: a tap node reported as "<name>/<model path>".
struct SelectedTap {
  std::string metric;
  NodeId node;
};

struct StepGraph {
  TracedModel traced;
  Gradients grads;  // training only
  std::vector<SelectedTap> taps;
  std::vector<NodeId> outputs;  // what must be computed: loss, metrics, gradients, selected taps
  plan::Plan plan;              // the schedule and the arena, unselected taps pruned
};

struct PassGraph {
  std::shared_ptr<EvalDecl> decl;
  int64_t batch = 0;  // records per batch of the pass
  StepGraph step;
};

struct Compiled {
  std::unique_ptr<Interp> interp;
  Experiment* x = nullptr;
  StepGraph train;
  int64_t micro_rows = 0;  // records per microbatch
  std::vector<PassGraph> passes;
  std::vector<ParamInfo> params;
  std::string graph_hash;  // of the training graph: ops, shapes, dtypes, paths
  // What graph_hash would be at each :precision, for a resume that changes it.
  std::map<std::string, std::string> graph_hashes;
  int64_t param_count() const;
};

// What compiling takes from the environment and the process.
struct CompileOptions {
  int64_t eval_limit = 0;            // SEXPGPU_EVAL_LIMIT: the evaluator's work budget
  std::optional<double> memory_gib;  // SEXPGPU_MEMORY: the memory a step must fit in
  // Set by a stopping signal: every stage polls it and throws Interrupted.
  const std::atomic<bool>* stop = nullptr;
  int nodes = 1;        // SEXPGPU_NODES: each node's microbatch is :batch / (nodes x :microbatches) records
  int gpus = 1;         // SEXPGPU_DEVICES with --device cuda: likewise, :batch / (gpus x :microbatches)
  std::string display;  // how errors name the file (a bundle's "b.sxb:exp/run.sx"); empty: its path
};
CompileOptions compile_options(const Environment& env, const std::atomic<bool>* stop);

Compiled compile(const std::string& file, const Selection& sel, const CompileOptions& options);

}  // namespace sx
