#pragma once
// Shared checks for the node constructors (graph/build_*.cpp only).
#include <fmt/format.h>

#include "graph/build.h"
#include "util/error.h"

namespace sx::ops::detail {

inline const Node& node(const Graph& g, NodeId id) {
  SX_ASSERT(id < g.size(), "node id out of range");
  return g.node(id);
}

inline NodeId make(Graph& g, Op op, DType dtype, const Shape& shape, std::vector<NodeId> inputs, Span at,
                   Attrs attrs = {}) {
  Node n;
  n.op = op;
  n.dtype = dtype;
  n.shape = shape;
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  n.span = at;
  return g.add(std::move(n));
}

// A user axis (negative counts from the end) as an index in [0, rank).
inline int norm_axis(const Graph& g, NodeId x, int axis, const char* op, Span at) {
  const Shape& s = node(g, x).shape;
  int a = axis < 0 ? axis + s.rank : axis;
  if (a < 0 || a >= s.rank)
    throw user_error(Code::SHAPE_003, at, "{}: expected an axis in [{}, {}) for shape {}, found {}", op,
                     -s.rank, s.rank, s.str(), axis);
  return a;
}

inline void need_float(const Graph& g, NodeId x, const char* op, Span at) {
  DType d = node(g, x).dtype;
  if (!is_float(d))
    throw UserError(Code::SHAPE_005, at,
                    fmt::format("{}: expected a float tensor, found {}", op, dtype_name(d)),
                    "convert it with (cast x f32)");
}

inline void need_dtype(const Graph& g, NodeId x, DType want, const char* op, const char* what, Span at) {
  DType d = node(g, x).dtype;
  if (d != want)
    throw user_error(Code::SHAPE_005, at, "{}: expected {} of type {}, found {}", op, what, dtype_name(want),
                     dtype_name(d));
}

}  // namespace sx::ops::detail
