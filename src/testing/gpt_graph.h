#pragma once
// A GPT-like training graph (std/nn's `gpt`: embed + positions, pre-norm
// blocks of causal attention and a GELU MLP, final layer norm, untied head,
// cross-entropy), built directly with the graph constructors. Tests and the
// benchmark use it; the runtime traces the real one from .sx.
#include <cstdint>

#include "graph/graph.h"

namespace sx::cpu {

struct GptShape {
  int64_t batch = 2, seq = 16, vocab = 64, d = 32, heads = 4, layers = 2;
};

struct GptGraph {
  NodeId tokens = kNoNode, targets = kNoNode;  // inputs "tokens" and "targets", i32 [batch, seq]
  NodeId loss = kNoNode;                       // f32 []
};

// Appends the forward graph and its loss to g (params at std/nn's paths).
GptGraph build_gpt(Graph& g, const GptShape& s);

}  // namespace sx::cpu
