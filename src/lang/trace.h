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

}  // namespace sx
