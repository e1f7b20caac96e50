#include "graph/precision.h"

#include "graph/build.h"

namespace sx {

namespace {

bool is_product(const Node& n) { return (n.op == Op::Matmul || n.op == Op::Attention) && n.dtype == DType::F32; }

// The node that adds a bias to matmul `id` when that is all `id` feeds: `id`
// read by one node only, an add of a vector along its last axis. A GPU (and
// PyTorch's bf16 linear) stores that sum in bf16, not the bare product.
NodeId bias_add_of(const Graph& g, NodeId id, const std::vector<int>& readers, const std::vector<NodeId>& reader) {
  if (g.node(id).op != Op::Matmul || readers[id] != 1) return kNoNode;
  const Node& a = g.node(reader[id]);
  if (a.op != Op::Add || a.inputs.size() != 2 || a.shape != g.node(id).shape) return kNoNode;
  NodeId other = a.inputs[0] == id ? a.inputs[1] : a.inputs[0];
  const Shape& b = g.node(other).shape;
  bool vector = b.rank == 1 && b[0] == a.shape.back() && g.node(other).dtype == DType::F32;
  return vector && other != id ? reader[id] : kNoNode;
}

}  // namespace

Graph round_products_bf16(const Graph& g, const std::vector<NodeId>& roots, std::vector<NodeId>* map_out) {
  std::vector<bool> needed(g.size(), false);
  for (NodeId r : roots) needed[r] = true;
  for (NodeId id = static_cast<NodeId>(g.size()); id-- > 0;)
    if (needed[id])
      for (NodeId in : g.node(id).inputs) needed[in] = true;
  std::vector<int> readers(g.size(), 0);  // by every node, a diagnostic too
  std::vector<NodeId> reader(g.size(), kNoNode);
  for (NodeId id = 0; id < g.size(); ++id)
    for (NodeId in : g.node(id).inputs) ++readers[in], reader[in] = id;
  for (NodeId r : roots) readers[r] += 2;  // a root's own value is kept as it is
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
  // A product whose output is rounded after its bias, keyed by that bias add.
  std::vector<bool> rounds_after(g.size(), false);
  for (NodeId id = 0; id < g.size(); ++id) {
    Node n = g.node(id);
    bool product = needed[id] && is_product(n);
    for (NodeId& in : n.inputs) in = product ? operand(in) : map[in];
    out.scope = n.path;  // a top-level node keeps its empty path
    NodeId y = out.add(n);
    NodeId bias = product ? bias_add_of(g, id, readers, reader) : kNoNode;
    if (bias != kNoNode) rounds_after[bias] = true;
    bool round = (product && bias == kNoNode) || rounds_after[id];
    map[id] = round ? round_at(y, n.path, n.span) : y;
  }
  out.scope = g.scope;
  if (map_out) *map_out = std::move(map);
  return out;
}

}  // namespace sx
