#include "plan/plan.h"

#include <algorithm>

#include "plan/pack.h"
#include "util/error.h"

namespace sx::plan {

namespace {

int64_t aligned_bytes(const Node& n) {
  int64_t b = n.shape.numel() * 4;
  return (b + kAlign - 1) / kAlign * kAlign;
}

NodeId find(std::vector<NodeId>& parent, NodeId n) {
  while (parent[n] != n) n = parent[n] = parent[parent[n]];
  return n;
}

}  // namespace

bool is_alias_op(Op op) { return op == Op::Reshape || op == Op::StopGradient || op == Op::Tap; }

bool is_transpose(const Node& n) {
  int r = n.shape.rank;
  if (n.op != Op::Permute || r < 2) return false;
  for (int d = 0; d < r - 2; ++d)
    if (n.attrs.perm[d] != d) return false;
  return n.attrs.perm[r - 2] == r - 1 && n.attrs.perm[r - 1] == r - 2;
}

bool can_run_in_place(const Graph& g, NodeId node, size_t input) {
  const Node& n = g.node(node);
  const Node& x = g.node(n.inputs[input]);
  if (x.shape.numel() != n.shape.numel()) return false;  // broadcast operands are read many times
  switch (op_kind(n.op)) {
    case OpKind::Unary:
    case OpKind::Binary:
    case OpKind::Ternary:
      return true;
    default:
      break;
  }
  switch (n.op) {
    case Op::Dropout:
    case Op::LayerNorm:
    case Op::RmsNorm:
      return input == 0;
    case Op::Softmax:
    case Op::LogSoftmax:
      return input == 0 && n.attrs.axis == n.shape.rank - 1;  // rows are read whole before written
    default:
      return false;
  }
}

Plan make_plan(const Graph& g, const std::vector<NodeId>& outputs, const Options& options) {
  const size_t count = g.size();
  Plan p;
  p.outputs = outputs;
  std::vector<bool> need(count, false), is_output(count, false);
  for (NodeId o : outputs) {
    SX_ASSERT(o < count, "plan output out of range");
    need[o] = is_output[o] = true;
  }
  for (NodeId id = static_cast<NodeId>(count); id-- > 0;)
    if (need[id])
      for (NodeId in : g.node(id).inputs) need[in] = true;

  p.position.assign(count, -1);
  for (NodeId id = 0; id < count; ++id)
    if (need[id]) {
      p.position[id] = static_cast<int32_t>(p.schedule.size());
      p.schedule.push_back(id);
    }
  const int32_t end = static_cast<int32_t>(p.schedule.size());

  // Transposes that only matmuls read.
  std::vector<bool> foldable(count, false);
  if (options.fold_transpose) {
    for (NodeId id : p.schedule) foldable[id] = is_transpose(g.node(id)) && !is_output[id];
    for (NodeId id : p.schedule)
      if (g.node(id).op != Op::Matmul)
        for (NodeId in : g.node(id).inputs) foldable[in] = false;
  }

  // Views first: they only depend on the graph.
  std::vector<NodeId> parent(count);
  p.view.assign(count, false);
  for (NodeId id = 0; id < count; ++id) parent[id] = id;
  for (NodeId id : p.schedule) {
    const Node& n = g.node(id);
    if ((options.alias && is_alias_op(n.op)) || foldable[id]) {
      parent[id] = find(parent, n.inputs[0]);
      p.view[id] = true;
      ++p.aliases;
    }
  }

  // Lifetimes of the buffers (the roots), from their own nodes and every use.
  p.first.assign(count, 0);
  p.last.assign(count, 0);
  p.bytes.assign(count, 0);
  for (NodeId id : p.schedule) {
    NodeId r = find(parent, id);
    if (r == id) p.first[id] = g.node(id).op == Op::Input ? 0 : p.position[id];
    // Inputs stay for the whole step, so a batch written once can be run again.
    bool pinned = is_output[id] || g.node(id).op == Op::Input;
    p.last[r] = std::max(p.last[r], pinned ? end : p.position[id]);
    for (NodeId in : g.node(id).inputs) {
      NodeId ri = find(parent, in);
      p.last[ri] = std::max(p.last[ri], p.position[id]);
    }
  }

  // In place: an op takes the buffer of an input that dies at it. Going in
  // order keeps lifetimes exact: the merged buffer lives until the last use
  // of the new node (and its views).
  if (options.in_place) {
    for (NodeId id : p.schedule) {
      const Node& n = g.node(id);
      if (find(parent, id) != id || op_kind(n.op) == OpKind::Leaf) continue;
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        NodeId r = find(parent, n.inputs[i]);
        Op rop = g.node(r).op;
        if (rop == Op::Param || rop == Op::Input || p.last[r] != p.position[id]) continue;
        if (!can_run_in_place(g, id, i)) continue;
        parent[id] = r;
        p.last[r] = p.last[id];
        ++p.in_place;
        break;
      }
    }
  }

  p.storage.assign(count, kNoNode);
  p.offset.assign(count, -1);
  std::vector<NodeId> buffers;
  for (NodeId id : p.schedule) {
    NodeId r = find(parent, id);
    p.storage[id] = r;
    if (r == id && g.node(id).op != Op::Param) {
      p.bytes[id] = aligned_bytes(g.node(id));
      p.total_bytes += p.bytes[id];
      buffers.push_back(id);
    }
  }
  std::vector<Buffer> sized;
  for (NodeId id : buffers) sized.push_back({p.bytes[id], p.first[id], p.last[id]});
  std::vector<int64_t> offsets;
  p.arena_bytes = pack_buffers(sized, offsets, options.stop);
  for (size_t i = 0; i < buffers.size(); ++i) p.offset[buffers[i]] = offsets[i];
  for (NodeId id : p.schedule)
    if (g.node(p.storage[id]).op != Op::Param) p.offset[id] = p.offset[p.storage[id]];
  return p;
}

std::vector<std::pair<NodeId, int64_t>> Plan::largest(size_t n) const {
  std::vector<std::pair<NodeId, int64_t>> all;
  for (NodeId id : schedule)
    if (storage[id] == id && bytes[id] > 0) all.push_back({id, bytes[id]});
  std::sort(all.begin(), all.end(),
            [](auto& a, auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  if (all.size() > n) all.resize(n);
  return all;
}

}  // namespace sx::plan
