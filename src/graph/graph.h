#pragma once
// The tensor graph: nodes as plain data in an arena. Inputs always precede the
// nodes that use them, so node order is a topological order. Nodes are made
// only through the constructors in graph/build.h, which check shapes.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/op.h"
#include "graph/shape.h"
#include "util/source.h"

namespace sx {

using NodeId = uint32_t;
constexpr NodeId kNoNode = UINT32_MAX;

// How a parameter's first values are drawn.
struct Init {
  enum Kind : uint8_t { Zeros, Ones, Normal, Uniform } kind = Zeros;
  double a = 0;  // Normal: std; Uniform: low
  double b = 0;  // Uniform: high
};

// Every op's parameters in one struct; each op reads the fields ops.def names.
struct Attrs {
  int axis = 0;                         // reductions, softmax, slice, concat, gather, pad, scatter-add
  bool keep = false;                    // reductions: keep the axis as a dimension of 1
  bool causal = false;                  // attention
  double value = 0;                     // full's fill, eps, dropout's p, attention's scale
  int64_t start = 0;                    // slice [start, end); pad: zeros before
  int64_t end = 0;                      // pad: zeros after; arange: n
  std::array<int8_t, kMaxRank> perm{};  // permute
  uint64_t seed = 0;                    // dropout: the Philox key
  uint32_t stream = 0;                  // dropout: which dropout site, part of the Philox counter
  Init init;                            // param
  std::string name;                     // input's feed name, tap's diagnostic name
};

struct Node {
  Op op = Op::Full;
  DType dtype = DType::F32;
  Shape shape;
  std::vector<NodeId> inputs;
  Attrs attrs;
  std::string path;  // model path of the scope that made it, e.g. "blocks.0.attn.wq"
  Span span;         // the .sx operation that made it
};

class Graph {
 public:
  // The scope new nodes are stamped with (the front end sets it as it enters
  // and leaves `scope` forms); a param's path is its own.
  std::string scope;
  // Whether attention and cross-entropy add their built-in diagnostic taps.
  bool builtin_taps = true;

  const Node& node(NodeId id) const { return nodes_[id]; }
  Node& node(NodeId id) { return nodes_[id]; }
  const std::vector<Node>& nodes() const { return nodes_; }
  size_t size() const { return nodes_.size(); }

  // Appends a node whose shape and dtype the caller has checked, stamping the
  // scope as its path when it has none and registering params and inputs by
  // name (the caller has refused duplicates). Only constructors call this.
  NodeId add(Node n);

  // Parameters and inputs by name; kNoNode when absent.
  NodeId find_param(const std::string& path) const;
  NodeId find_input(const std::string& name) const;
  const std::map<std::string, NodeId>& params() const { return params_; }
  const std::map<std::string, NodeId>& inputs() const { return inputs_; }

 private:
  std::vector<Node> nodes_;
  std::map<std::string, NodeId> params_;
  std::map<std::string, NodeId> inputs_;
};

// One line per node, for tests and debugging: "%3 = add(%1, %2) f32[8,32] @blocks.0".
std::string dump(const Graph& g);

}  // namespace sx
