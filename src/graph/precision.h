#pragma once
// `:precision bf16` as a property of the graph: explicit round-bf16 nodes at
// the points where a GPU running in bf16 stores a value in bf16, so every
// backend rounds at the same places (docs/model.md, "Precision"):
// - both operands of every f32 matmul and q, k, v of every f32 attention
//   (weights included: the f32 master copy is rounded where it is used);
// - the output of every such matmul and attention (the product's stored
//   activation); its f32 accumulation inside the product stays f32. A
//   matmul whose only reader adds a bias vector is rounded after that add,
//   as a GPU's GEMM epilogue and PyTorch's bf16 linear store it;
// - through autodiff's rule for round-bf16, the gradient arriving at each of
//   those points, so backward products see bf16 operands too.
// Everything else stays f32: the residual stream, biases, elementwise ops,
// softmax, layer-norm and cross-entropy statistics, the loss, the sums of
// gradients, microbatch accumulation, the parameters and the optimizer.
#include <vector>

#include "graph/graph.h"

namespace sx {

// `g` with round-bf16 nodes inserted at the rounding points above, in
// topological order, for the products that `roots` (the loss and the
// metrics) depend on: a diagnostic's own products (attention's taps) stay
// f32. map[id] is the node of the result that carries old node id's value as
// later nodes see it (a product's rounded output).
Graph round_products_bf16(const Graph& g, const std::vector<NodeId>& roots, std::vector<NodeId>* map);

}  // namespace sx
