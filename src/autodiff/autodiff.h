#pragma once
// Reverse-mode differentiation on the graph: appends the backward nodes to the
// same Graph, built with the same constructors, each rule in rules.cpp.
#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace sx {

struct Gradients {
  // Model path -> the node holding d loss / d param (same shape as the param).
  // Every param of the graph has one; a param the loss does not depend on
  // (or only through stop-gradient) gets zeros.
  std::map<std::string, NodeId> params;
  // Per node of the forward graph, the gradient that flowed into it, or kNoNode.
  std::vector<NodeId> nodes;
};

// `loss` must be a float scalar (E-SHAPE-010, E-SHAPE-005 at `at`). `stop`
// (a stopping signal's flag) is polled every few hundred nodes: Interrupted.
Gradients backward(Graph& g, NodeId loss, Span at = {}, const std::atomic<bool>* stop = nullptr);

}  // namespace sx
