#include "graph/precision.h"

#include "graph/build.h"

namespace sx {

namespace {

bool is_product(const Node& n) { return (n.op == Op::Matmul || n.op == Op::Attention) && n.dtype == DType::F32; }

}  // namespace

Graph round_products_bf16(const Graph& g, const std::vector<NodeId>& roots, std::vector<NodeId>* map_out) {
  std::vector<bool> needed(g.size(), false);
  for (NodeId r : roots) needed[r] = true;
  for (NodeId id = static_cast<NodeId>(g.size()); id-- > 0;)
    if (needed[id])
      for (NodeId in : g.node(id).inputs) needed[in] = true;
  Graph out;
  out.builtin_taps = g.builtin_taps;
  std::vector<NodeId> map(g.size(), kNoNode);
  // One rounded copy per operand, however many products read it (a layer
  // norm's output read by the q, k and v products): one gradient to round.
  std::vector<NodeId> rounded(g.size(), kNoNode);
  auto round_at = [&](NodeId x, std::string path, Span span) {
    out.scope = std::move(path);
    return ops::round_bf16(out, x, span);
  };
  auto operand = [&](NodeId old) {
    NodeId now = map[old];
    const Node& v = out.node(now);
    if (v.op == Op::RoundBf16 || v.dtype != DType::F32) return now;  // already bf16 values
    if (rounded[old] == kNoNode) rounded[old] = round_at(now, v.path, v.span);
    return rounded[old];
  };
  for (NodeId id = 0; id < g.size(); ++id) {
    Node n = g.node(id);
    bool product = needed[id] && is_product(n);
    for (NodeId& in : n.inputs) in = product ? operand(in) : map[in];
    out.scope = n.path;  // a top-level node keeps its empty path
    NodeId y = out.add(n);
    map[id] = product ? round_at(y, n.path, n.span) : y;
  }
  out.scope = g.scope;
  if (map_out) *map_out = std::move(map);
  return out;
}

}  // namespace sx
