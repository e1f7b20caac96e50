#pragma once
// The parameters a traced graph makes, by model path: what every graph of a
// run (the training step, each pass) shares and a device holds.
#include <string>
#include <vector>

#include "graph/graph.h"

namespace sx {

struct ParamInfo {
  std::string path;
  Shape shape;
  Init init;
  Span span;  // where the param was made
};

// Every param of a traced graph, in path order. A param made in two graphs
// must have the same shape in both (E-SHAPE-007 otherwise).
std::vector<ParamInfo> params_of(const Graph& g);
void check_same_params(const std::vector<ParamInfo>& train, const Graph& other, const std::string& pass_name);

}  // namespace sx
