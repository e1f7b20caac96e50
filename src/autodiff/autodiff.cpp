#include "autodiff/autodiff.h"

#include <fmt/format.h>

#include "autodiff/rules.h"
#include "util/error.h"
#include "util/interrupted.h"

namespace sx {

using autodiff::GradCtx;

namespace {

// Which forward nodes a gradient must reach: float params, and float nodes
// computed from them by anything but stop-gradient.
std::vector<bool> needs_grad(const Graph& g, size_t count) {
  std::vector<bool> needs(count, false);
  for (NodeId id = 0; id < count; ++id) {
    const Node& n = g.node(id);
    if (!is_float(n.dtype) || n.op == Op::StopGradient) continue;
    if (n.op == Op::Param) needs[id] = true;
    for (NodeId in : n.inputs) needs[id] = needs[id] || needs[in];
  }
  return needs;
}

}  // namespace

Gradients backward(Graph& g, NodeId loss, Span at, const std::atomic<bool>* stop) {
  SX_ASSERT(loss < g.size(), "loss node out of range");
  const Node& l = g.node(loss);
  if (l.shape.rank != 0)
    throw UserError(Code::SHAPE_010, at, fmt::format("expected a scalar loss [], found {}", l.shape.str()),
                    "reduce it, e.g. with (mean x) or cross-entropy");
  if (!is_float(l.dtype)) throw user_error(Code::SHAPE_005, at, "expected a float loss, found {}", dtype_name(l.dtype));

  const size_t forward = g.size();
  std::vector<bool> needs = needs_grad(g, forward);
  Gradients out;
  out.nodes.assign(forward, kNoNode);
  std::string saved_scope = g.scope;
  g.scope = l.path;
  out.nodes[loss] = ops::scalar(g, 1.0, DType::F32, at);

  for (NodeId id = loss + 1; id-- > 0;) {
    if (id % 256 == 0) poll_stop(stop);
    NodeId gy = out.nodes[id];
    if (gy == kNoNode || !needs[id] || g.node(id).op == Op::Param) continue;
    GradCtx c{g, id, g.node(id), gy, {}, {}};
    for (NodeId in : c.n.inputs) c.wants.push_back(needs[in]);
    c.gx.assign(c.n.inputs.size(), kNoNode);
    g.scope = c.n.path;  // backward nodes carry the path of the op they differentiate
    autodiff::rule_for(c.n.op)(c);
    for (size_t i = 0; i < c.gx.size(); ++i) {
      NodeId in = c.n.inputs[i], gx = c.gx[i];
      if (gx == kNoNode || !needs[in]) continue;
      SX_ASSERT(g.node(gx).shape == g.node(in).shape,
                fmt::format("gradient rule of {} gave {} for an input of {}", op_name(c.n.op), g.node(gx).shape.str(),
                            g.node(in).shape.str()));
      NodeId& acc = out.nodes[in];
      acc = acc == kNoNode ? gx : ops::add(g, acc, gx, c.n.span);
    }
  }

  for (const auto& [path, id] : g.params()) {
    if (id >= forward) continue;
    NodeId grad = out.nodes[id];
    if (grad == kNoNode) {
      g.scope = path;
      grad = ops::full(g, g.node(id).shape.vec(), 0.0, DType::F32, g.node(id).span);
    }
    out.params[path] = grad;
  }
  g.scope = saved_scope;
  return out;
}

}  // namespace sx
