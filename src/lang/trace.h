#pragma once
// The tracer: the model function called on placeholder tensors becomes a graph.
#include <string>
#include <vector>

#include "graph/graph.h"
#include "lang/experiment.h"

namespace sx {

struct TracedModel {
  Graph graph;
  NodeId loss = kNoNode;
  std::vector<std::pair<std::string, NodeId>> metrics;  // the model's extra outputs, by name
  int64_t rows = 0;                                      // records a call sees
};

// Calls the run's model on `tokens`/`targets` placeholders [rows, seq-len] (i32)
// of `loader`. `training`: dropout is active. The loss must be a float scalar.
TracedModel trace_model(Interp& in, const LoaderDecl& loader, int64_t rows, bool training);

// The run's :precision made part of the traced graph, before autodiff (so
// that the backward's products are rounded too): bf16 inserts round-bf16
// nodes (graph/precision.h); f32 and tf32 leave it as traced (tf32 runs as
// f32 on the CPU).
void apply_precision(TracedModel& m, const std::string& precision);

}  // namespace sx
