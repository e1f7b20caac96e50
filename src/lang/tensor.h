#pragma once
// Tensors at compile time: calling the model on placeholders traces a graph.
// A tensor Value is a node of the graph being traced; tensor operations add
// nodes, stamped with the .sx position and the model path of the scope.
#include <memory>
#include <string>
#include <vector>

#include "graph/build.h"
#include "lang/interp.h"

namespace sx {

// The trace in progress: which graph, and what the graph is for.
struct TraceContext {
  Graph* graph = nullptr;
  bool training = true;      // dropout is the identity in evaluation passes
  uint64_t seed = 0;         // the run's seed: dropout's Philox key
  uint32_t dropout_sites = 0;  // each dropout call in trace order gets its own stream
};

struct TensorRef : Object {
  Graph* graph;
  NodeId id;
  TensorRef(Graph* g, NodeId n) : graph(g), id(n) {}
  std::string type_name() const override { return "tensor"; }
  std::string repr() const override;
};

// (normal std), (uniform a b), zeros, ones
struct InitSpec : Object {
  Init init;
  std::string type_name() const override { return "init"; }
};

// (outputs :loss l :accuracy a ...): the loss and extra scalar metrics.
struct Outputs : Object {
  std::vector<std::pair<std::string, ValueP>> named;  // "loss" first
  std::string type_name() const override { return "outputs"; }
};

// True when any positional argument is a tensor: arithmetic then traces.
bool any_tensor(const Args& a);
// + - * / pow maximum minimum on tensors (numbers become scalar constants).
ValueP tensor_arith(Interp& in, Op op, Args& a);

void register_tensor_builtins(Interp& in);

}  // namespace sx
