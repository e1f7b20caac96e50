#pragma once
// The reference backend: the definition of every op, in plain loops, clarity
// over speed. Other backends are tested against it; autodiff is tested with it
// in double precision against finite differences.
#include <map>
#include <string>
#include <vector>

#include "backend/ref/tensor.h"
#include "graph/graph.h"
#include "util/error.h"

namespace sx::ref {

template <typename T>
struct Feeds {
  std::map<std::string, Tensor<T>> inputs;  // by Input name
  std::map<std::string, Tensor<T>> params;  // by model path
  uint64_t rng_offset = 0;                  // the step's Philox offset (dropout)
};

// Computes the nodes of `g` — all of them, or only those `outputs` need — and
// returns one tensor per node (empty for nodes not computed). A feed missing
// or of the wrong shape is a bug of the caller (SX_ASSERT); an id out of range
// is a UserError E-SHAPE-012 at the node's span. T is float or double.
template <typename T>
std::vector<Tensor<T>> evaluate(const Graph& g, const Feeds<T>& feeds,
                                const std::vector<NodeId>& outputs = {});

// A parameter's initial values drawn by its Init from Philox (seed, stream).
template <typename T>
Tensor<T> init_param(const Node& param, uint64_t seed, uint32_t stream);

}  // namespace sx::ref
