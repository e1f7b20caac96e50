// What each kernel needs that depends only on shapes, computed once when the
// executor is built so that a step allocates and derives nothing.
#include <algorithm>

#include "backend/cpu/kernels.h"

namespace sx::cpu {

namespace {

Strides contiguous(const Shape& s) { return strides(s); }

// Operand (to) over `over`, at `axis` offset `at` of the tensor `to` is part of.
Strided region_copy(const Shape& over, const Shape& to, const Shape& from, int axis, int64_t to_at,
                    int64_t from_at) {
  Strides st[2] = {contiguous(to), contiguous(from)};
  int64_t bases[2] = {to_at * st[0][axis], from_at * st[1][axis]};
  return Strided::make(over, 2, st, bases);
}

void prepare_matmul(const Graph& g, const Node& n, Prep& p) {
  const Shape &sa = g.node(n.inputs[0]).shape, &sb = g.node(n.inputs[1]).shape;
  Shape batch = n.shape, ba = sa, bb = sb;
  batch.rank -= 2, ba.rank -= 2, bb.rank -= 2;
  Strides s[3] = {contiguous(batch), broadcast_strides(ba, batch), broadcast_strides(bb, batch)};
  std::array<int64_t, kMaxRank> c{};
  for (int64_t q = 0, total = batch.numel(); q < total; ++q) {
    int64_t ia = 0, ib = 0;
    for (int d = 0; d < batch.rank; ++d) ia += c[d] * s[1][d], ib += c[d] * s[2][d];
    p.batch.push_back(ia);
    p.batch.push_back(ib);
    for (int d = batch.rank - 1; d >= 0 && ++c[d] == batch[d]; --d) c[d] = 0;
  }
}

// Kept dimensions (out, x) in `it`, reduced ones (x) in parts[0].
void prepare_sum_to(const Shape& x, const Shape& out, Prep& p) {
  Shape o = x, red = x;
  Strides sx = contiguous(x), so{}, rs{};
  Strides oc = contiguous(out);
  int lead = x.rank - out.rank;
  for (int d = 0; d < x.rank; ++d) {
    int64_t od = d >= lead ? out[d - lead] : 1;
    bool kept = od == x[d];
    o[d] = kept ? x[d] : 1;
    red[d] = kept ? 1 : x[d];
    so[d] = d >= lead ? oc[d - lead] : 0;
    rs[d] = sx[d];
  }
  Strides st[2] = {so, sx};
  p.it = Strided::make(o, 2, st, nullptr);
  p.parts.push_back(Strided::make(red, 1, &rs, nullptr));
}

}  // namespace

void prepare(const Graph& g, NodeId id, Prep& p) {
  const Node& n = g.node(id);
  auto in = [&](size_t k) -> const Shape& { return g.node(n.inputs[k]).shape; };
  switch (op_kind(n.op)) {
    case OpKind::Binary:
    case OpKind::Ternary: {
      Strides st[Strided::kOps] = {contiguous(n.shape)};
      for (size_t k = 0; k < n.inputs.size(); ++k) st[k + 1] = broadcast_strides(in(k), n.shape);
      p.it = Strided::make(n.shape, static_cast<int>(n.inputs.size()) + 1, st, nullptr);
      return;
    }
    case OpKind::Matrix:
      return prepare_matmul(g, n, p);
    default:
      break;
  }
  switch (n.op) {
    case Op::Permute: {
      Strides src = contiguous(in(0)), st[2] = {contiguous(n.shape), {}};
      for (int d = 0; d < n.shape.rank; ++d) st[1][d] = src[n.attrs.perm[d]];
      p.it = Strided::make(n.shape, 2, st, nullptr);
      return;
    }
    case Op::Expand: {
      Strides st[2] = {contiguous(n.shape), broadcast_strides(in(0), n.shape)};
      p.it = Strided::make(n.shape, 2, st, nullptr);
      return;
    }
    case Op::Slice:
      p.it = region_copy(n.shape, n.shape, in(0), n.attrs.axis, 0, n.attrs.start);
      return;
    case Op::Pad:
      p.it = region_copy(in(0), n.shape, in(0), n.attrs.axis, n.attrs.start, 0);
      return;
    case Op::Concat: {
      int64_t at = 0;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        p.parts.push_back(region_copy(in(k), n.shape, in(k), n.attrs.axis, at, 0));
        at += in(k)[n.attrs.axis];
      }
      return;
    }
    case Op::SumTo:
      return prepare_sum_to(in(0), n.shape, p);
    case Op::Attention:
      p.scratch_floats = attention_scratch(g.node(n.inputs[0]), g.node(n.inputs[1]), g.node(n.inputs[2]));
      return;
    case Op::CrossEntropy:
    case Op::Accuracy:
      p.scratch_floats = in(1).numel();
      return;
    default:
      return;
  }
}

}  // namespace sx::cpu
