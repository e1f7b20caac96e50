#include "graph/graph.h"

#include <fmt/format.h>

#include "util/error.h"
#include "util/memory.h"

namespace sx {

namespace {

// A tensor that could never be allocated is refused where the .sx makes it.
void check_size(const Node& n) {
  uint64_t numel = 1;
  bool overflow = false;
  for (int d = 0; d < n.shape.rank; ++d)
    overflow = overflow || __builtin_mul_overflow(numel, static_cast<uint64_t>(n.shape[d]), &numel);
  overflow = overflow || numel > static_cast<uint64_t>(INT64_MAX) / 4;
  if (!overflow && numel * 4 <= memory_budget()) return;
  std::string what = n.op == Op::Param   ? fmt::format("parameter `{}`", n.path)
                     : n.op == Op::Input ? fmt::format("input `{}`", n.attrs.name)
                                         : fmt::format("the result of {}", op_name(n.op));
  std::string size = overflow ? "its element count overflows 64 bits"
                              : fmt::format("{} elements, {} at 4 bytes each, more than {}", numel,
                                            bytes_text(numel * 4), memory_budget_text());
  throw UserError(Code::SHAPE_030, n.span,
                  fmt::format("{} {}{} is too large: {}", what, dtype_name(n.dtype), n.shape.str(), size),
                  "use smaller dimensions, or a smaller :batch or :seq-len");
}

}  // namespace

NodeId Graph::add(Node n) {
  check_size(n);
  SX_ASSERT(nodes_.size() < kNoNode, "graph too large");
  NodeId id = static_cast<NodeId>(nodes_.size());
  for (NodeId in : n.inputs) SX_ASSERT(in < id, "node input does not precede it");
  int arity = op_arity(n.op);
  SX_ASSERT(arity < 0 || static_cast<size_t>(arity) == n.inputs.size(), "wrong number of inputs");
  if (n.path.empty() && n.op != Op::Param) n.path = scope;
  if (n.op == Op::Param) {
    SX_ASSERT(!params_.count(n.path), "duplicate param reached Graph::add");
    params_[n.path] = id;
  } else if (n.op == Op::Input) {
    SX_ASSERT(!inputs_.count(n.attrs.name), "duplicate input reached Graph::add");
    inputs_[n.attrs.name] = id;
  }
  nodes_.push_back(std::move(n));
  return id;
}

NodeId Graph::find_param(const std::string& path) const {
  auto it = params_.find(path);
  return it == params_.end() ? kNoNode : it->second;
}

NodeId Graph::find_input(const std::string& name) const {
  auto it = inputs_.find(name);
  return it == inputs_.end() ? kNoNode : it->second;
}

std::string dump(const Graph& g) {
  std::string out;
  for (NodeId id = 0; id < g.size(); ++id) {
    const Node& n = g.node(id);
    std::vector<std::string> ins;
    for (NodeId in : n.inputs) ins.push_back(fmt::format("%{}", in));
    out +=
        fmt::format("%{} = {}({}) {}{}", id, op_name(n.op), fmt::join(ins, ", "), dtype_name(n.dtype), n.shape.str());
    if (!n.attrs.name.empty()) out += fmt::format(" \"{}\"", n.attrs.name);
    if (!n.path.empty()) out += fmt::format(" @{}", n.path);
    out += "\n";
  }
  return out;
}

}  // namespace sx
