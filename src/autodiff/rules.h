#pragma once
// What a gradient rule sees: the forward node, the gradient of its output, and
// which inputs need a gradient; it fills in one gradient per input (kNoNode
// for none). Rules live in rules.cpp, one function per op, in one table.
#include <vector>

#include "graph/build.h"

namespace sx::autodiff {

struct GradCtx {
  Graph& g;
  NodeId y;                 // the forward node
  Node n;                   // a copy of it: rules grow the arena, so no references
  NodeId gy;                // d loss / d y
  std::vector<bool> wants;  // per input
  std::vector<NodeId> gx;   // per input: d loss / d input, kNoNode when none

  NodeId in(size_t i) const { return n.inputs[i]; }
  Shape shape(NodeId id) const { return g.node(id).shape; }
  Span at() const { return n.span; }
};

using Rule = void (*)(GradCtx&);
Rule rule_for(Op op);

}  // namespace sx::autodiff
