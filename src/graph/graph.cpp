#include "graph/graph.h"

#include <fmt/format.h>

#include "util/error.h"

namespace sx {

NodeId Graph::add(Node n) {
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
    out += fmt::format("%{} = {}({}) {}{}", id, op_name(n.op), fmt::join(ins, ", "), dtype_name(n.dtype),
                       n.shape.str());
    if (!n.attrs.name.empty()) out += fmt::format(" \"{}\"", n.attrs.name);
    if (!n.path.empty()) out += fmt::format(" @{}", n.path);
    out += "\n";
  }
  return out;
}

}  // namespace sx
