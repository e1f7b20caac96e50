// Constructors for shape ops: views are explicit, each makes a fresh tensor.
#include <numeric>

#include "graph/build_util.h"

namespace sx::ops {

using namespace detail;

NodeId reshape(Graph& g, NodeId x, const Dims& shape, Span at) {
  const Shape s = node(g, x).shape;
  Dims out = shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == -1 && infer < 0) {
      infer = static_cast<int>(d);
    } else if (out[d] < 0) {
      throw user_error(Code::SHAPE_004, at,
                       "reshape: expected dimensions >= 0 and at most one -1, found [{}]",
                       fmt::join(shape, ","));
    } else {
      known *= out[d];
    }
  }
  if (infer >= 0) {
    if (known == 0 || s.numel() % known != 0)
      throw user_error(Code::SHAPE_004, at,
                       "reshape: cannot infer the -1 in [{}] for {} elements of shape {}",
                       fmt::join(shape, ","), s.numel(), s.str());
    out[infer] = s.numel() / known;
    known = s.numel();
  }
  if (known != s.numel())
    throw user_error(Code::SHAPE_004, at,
                     "reshape: expected a shape of {} elements like {}, found [{}] ({} elements)", s.numel(),
                     s.str(), fmt::join(shape, ","), known);
  return make(g, Op::Reshape, node(g, x).dtype, to_shape(out, at), {x}, at);
}

NodeId permute(Graph& g, NodeId x, const std::vector<int>& perm, Span at) {
  const Shape s = node(g, x).shape;
  std::vector<bool> seen(s.rank, false);
  bool ok = static_cast<int>(perm.size()) == s.rank;
  for (size_t d = 0; ok && d < perm.size(); ++d) {
    int p = perm[d] < 0 ? perm[d] + s.rank : perm[d];
    ok = p >= 0 && p < s.rank && !seen[p];
    if (ok) seen[p] = true;
  }
  if (!ok)
    throw user_error(Code::SHAPE_011, at, "permute: expected each of the {} axes of {} once, found [{}]",
                     s.rank, s.str(), fmt::join(perm, ","));
  Attrs a;
  Shape out;
  out.rank = s.rank;
  for (int d = 0; d < s.rank; ++d) {
    int p = perm[d] < 0 ? perm[d] + s.rank : perm[d];
    a.perm[d] = static_cast<int8_t>(p);
    out[d] = s[p];
  }
  return make(g, Op::Permute, node(g, x).dtype, out, {x}, at, a);
}

NodeId transpose(Graph& g, NodeId x, Span at) {
  int r = node(g, x).shape.rank;
  if (r < 2)
    throw user_error(Code::SHAPE_011, at, "transpose: expected rank 2 or more, found {}",
                     node(g, x).shape.str());
  std::vector<int> perm(r);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[r - 1], perm[r - 2]);
  return permute(g, x, perm, at);
}

NodeId slice(Graph& g, NodeId x, int axis, int64_t start, int64_t end, Span at) {
  Attrs a;
  a.axis = norm_axis(g, x, axis, "slice", at);
  Shape s = node(g, x).shape;
  int64_t n = s[a.axis];
  a.start = start < 0 ? start + n : start;
  a.end = end < 0 ? end + n : end;
  if (a.start < 0 || a.end > n || a.start > a.end)
    throw user_error(Code::SHAPE_008, at,
                     "slice: expected 0 <= start <= end <= {} on axis {} of {}, found {}..{}", n, a.axis,
                     s.str(), start, end);
  s[a.axis] = a.end - a.start;
  return make(g, Op::Slice, node(g, x).dtype, s, {x}, at, a);
}

NodeId concat(Graph& g, const std::vector<NodeId>& xs, int axis, Span at) {
  SX_ASSERT(!xs.empty(), "concat of nothing");
  Attrs a;
  a.axis = norm_axis(g, xs[0], axis, "concat", at);
  Shape out = node(g, xs[0]).shape;
  DType dt = node(g, xs[0]).dtype;
  for (size_t i = 1; i < xs.size(); ++i) {
    const Shape s = node(g, xs[i]).shape;
    bool fits = s.rank == out.rank;
    for (int d = 0; fits && d < s.rank; ++d) fits = d == a.axis || s[d] == out[d];
    if (!fits)
      throw user_error(Code::SHAPE_009, at, "concat: expected shapes equal but on axis {}, found {} and {}",
                       a.axis, node(g, xs[0]).shape.str(), s.str());
    need_dtype(g, xs[i], dt, "concat", "operands", at);
    out[a.axis] += s[a.axis];
  }
  return make(g, Op::Concat, dt, out, xs, at, a);
}

std::vector<NodeId> split(Graph& g, NodeId x, const Dims& sizes, int axis, Span at) {
  int ax = norm_axis(g, x, axis, "split", at);
  int64_t n = node(g, x).shape[ax], total = 0;
  bool ok = true;
  for (int64_t s : sizes) ok = ok && s >= 0, total += s;
  if (!ok || total != n)
    throw user_error(Code::SHAPE_008, at, "split: expected sizes adding up to {} (axis {} of {}), found [{}]",
                     n, ax, node(g, x).shape.str(), fmt::join(sizes, ","));
  std::vector<NodeId> parts;
  int64_t start = 0;
  for (int64_t s : sizes) {
    parts.push_back(slice(g, x, ax, start, start + s, at));
    start += s;
  }
  return parts;
}

std::vector<NodeId> split_n(Graph& g, NodeId x, int64_t parts, int axis, Span at) {
  int ax = norm_axis(g, x, axis, "split", at);
  int64_t n = node(g, x).shape[ax];
  if (parts <= 0 || n % parts != 0)
    throw user_error(Code::SHAPE_008, at,
                     "split: expected a number of parts that divides {} (axis {} of {}), found {}", n, ax,
                     node(g, x).shape.str(), parts);
  return split(g, x, Dims(parts, n / parts), ax, at);
}

NodeId gather(Graph& g, NodeId x, NodeId ids, int axis, Span at) {
  need_dtype(g, ids, DType::I32, "gather", "ids", at);
  Attrs a;
  a.axis = norm_axis(g, x, axis, "gather", at);
  const Shape s = node(g, x).shape, si = node(g, ids).shape;
  Dims out;
  for (int d = 0; d < a.axis; ++d) out.push_back(s[d]);
  for (int d = 0; d < si.rank; ++d) out.push_back(si[d]);
  for (int d = a.axis + 1; d < s.rank; ++d) out.push_back(s[d]);
  return make(g, Op::Gather, node(g, x).dtype, to_shape(out, at), {x, ids}, at, a);
}

NodeId expand(Graph& g, NodeId x, const Shape& shape, Span at) {
  const Shape s = node(g, x).shape;
  Shape b;
  if (!broadcast_shapes(s, shape, &b) || !(b == shape))
    throw user_error(Code::SHAPE_001, at, "expand: expected a shape that broadcasts to {}, found {}",
                     shape.str(), s.str());
  return make(g, Op::Expand, node(g, x).dtype, shape, {x}, at);
}

NodeId sum_to(Graph& g, NodeId x, const Shape& shape, Span at) {
  const Shape s = node(g, x).shape;
  Shape b;
  if (!broadcast_shapes(shape, s, &b) || !(b == s))
    throw user_error(Code::SHAPE_001, at, "sum-to: expected a shape that broadcasts to {}, found {}", s.str(),
                     shape.str());
  return make(g, Op::SumTo, node(g, x).dtype, shape, {x}, at);
}

NodeId pad(Graph& g, NodeId x, int axis, int64_t before, int64_t after, Span at) {
  Attrs a;
  a.axis = norm_axis(g, x, axis, "pad", at);
  if (before < 0 || after < 0)
    throw user_error(Code::SHAPE_008, at, "pad: expected counts >= 0, found {} and {}", before, after);
  a.start = before;
  a.end = after;
  Shape s = node(g, x).shape;
  s[a.axis] += before + after;
  return make(g, Op::Pad, node(g, x).dtype, s, {x}, at, a);
}

NodeId scatter_add(Graph& g, NodeId src, NodeId ids, int axis, int64_t size, Span at) {
  need_dtype(g, ids, DType::I32, "scatter-add", "ids", at);
  const Shape s = node(g, src).shape, si = node(g, ids).shape;
  bool fits = axis >= 0 && axis + si.rank <= s.rank && size >= 0;
  for (int d = 0; fits && d < si.rank; ++d) fits = s[axis + d] == si[d];
  if (!fits)
    throw user_error(Code::SHAPE_009, at, "scatter-add: expected ids {} to match {} from axis {}", si.str(),
                     s.str(), axis);
  Dims out;
  for (int d = 0; d < axis; ++d) out.push_back(s[d]);
  out.push_back(size);
  for (int d = axis + si.rank; d < s.rank; ++d) out.push_back(s[d]);
  Attrs a;
  a.axis = axis;
  return make(g, Op::ScatterAdd, node(g, src).dtype, to_shape(out, at), {src, ids}, at, a);
}

}  // namespace sx::ops
