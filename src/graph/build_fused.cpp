// Constructors for fused ops and control ops.
#include <cmath>

#include "graph/build_util.h"

namespace sx::ops {

using namespace detail;

NodeId softmax(Graph& g, NodeId x, int axis, Span at) {
  need_float(g, x, "softmax", at);
  Attrs a;
  a.axis = norm_axis(g, x, axis, "softmax", at);
  return make(g, Op::Softmax, node(g, x).dtype, node(g, x).shape, {x}, at, a);
}

NodeId log_softmax(Graph& g, NodeId x, int axis, Span at) {
  need_float(g, x, "log-softmax", at);
  Attrs a;
  a.axis = norm_axis(g, x, axis, "log-softmax", at);
  return make(g, Op::LogSoftmax, node(g, x).dtype, node(g, x).shape, {x}, at, a);
}

namespace {

// gain (and bias) must be [d] for x [..., d].
void check_norm(const Graph& g, const char* op, NodeId x, std::vector<NodeId> vecs, double eps, Span at) {
  need_float(g, x, op, at);
  const Shape s = node(g, x).shape;
  if (s.rank < 1) throw user_error(Code::SHAPE_009, at, "{}: expected x of rank 1 or more, found []", op);
  for (NodeId v : vecs) {
    need_float(g, v, op, at);
    if (!(node(g, v).shape == Shape{s.back()}))
      throw user_error(Code::SHAPE_009, at, "{}: expected gain and bias of shape [{}] for x {}, found {}", op,
                       s.back(), s.str(), node(g, v).shape.str());
  }
  if (!(eps > 0) || !std::isfinite(eps))
    throw user_error(Code::SHAPE_014, at, "{}: expected eps > 0, found {}", op, eps);
}

// q k^T * scale, with the causal mask as -inf: query i of tq sees key j <= i + tk - tq.
NodeId masked_scores(Graph& g, NodeId q, NodeId k, bool causal, double scale, Span at) {
  NodeId s = mul(g, matmul(g, q, transpose(g, k, at), at), scalar(g, scale, DType::F32, at), at);
  if (!causal) return s;
  int64_t tq = node(g, q).shape[node(g, q).shape.rank - 2], tk = node(g, k).shape[node(g, k).shape.rank - 2];
  NodeId rows = add(g, reshape(g, arange(g, tq, DType::I32, at), {tq, 1}, at),
                    scalar(g, static_cast<double>(tk - tq), DType::I32, at), at);
  NodeId cols = reshape(g, arange(g, tk, DType::I32, at), {1, tk}, at);
  return where(g, le(g, cols, rows, at), s, scalar(g, -INFINITY, DType::F32, at), at);
}

}  // namespace

NodeId layer_norm(Graph& g, NodeId x, NodeId gain, NodeId bias, double eps, Span at) {
  check_norm(g, "layer-norm", x, {gain, bias}, eps, at);
  Attrs a;
  a.value = eps;
  return make(g, Op::LayerNorm, node(g, x).dtype, node(g, x).shape, {x, gain, bias}, at, a);
}

NodeId rms_norm(Graph& g, NodeId x, NodeId gain, double eps, Span at) {
  check_norm(g, "rms-norm", x, {gain}, eps, at);
  Attrs a;
  a.value = eps;
  return make(g, Op::RmsNorm, node(g, x).dtype, node(g, x).shape, {x, gain}, at, a);
}

NodeId attention_weights(Graph& g, NodeId q, NodeId k, bool causal, double scale, Span at) {
  return softmax(g, masked_scores(g, q, k, causal, scale, at), -1, at);
}

NodeId attention(Graph& g, NodeId q, NodeId k, NodeId v, bool causal, double scale, Span at) {
  const Shape sq = node(g, q).shape, sk = node(g, k).shape, sv = node(g, v).shape;
  bool fits = sq.rank >= 2 && sk.rank == sq.rank && sv.rank == sq.rank && sq.back() == sk.back() &&
              sk[sk.rank - 2] == sv[sv.rank - 2];
  for (int d = 0; fits && d < sq.rank - 2; ++d) fits = sq[d] == sk[d] && sq[d] == sv[d];
  if (!fits)
    throw user_error(
        Code::SHAPE_009, at,
        "attention: expected q [..., tq, d], k [..., tk, d], v [..., tk, dv], found {}, {} and {}", sq.str(),
        sk.str(), sv.str());
  for (NodeId t : {q, k, v}) need_float(g, t, "attention", at);
  if (scale == 0) scale = 1.0 / std::sqrt(static_cast<double>(sq.back()));
  if (!std::isfinite(scale))
    throw user_error(Code::SHAPE_014, at, "attention: expected a finite scale, found {}", scale);
  Attrs a;
  a.causal = causal;
  a.value = scale;
  Shape out = sq;
  out[out.rank - 1] = sv.back();
  NodeId y = make(g, Op::Attention, node(g, q).dtype, out, {q, k, v}, at, a);
  if (g.builtin_taps) {
    NodeId s = masked_scores(g, stop_gradient(g, q, at), stop_gradient(g, k, at), causal, scale, at);
    NodeId p = softmax(g, s, -1, at);
    NodeId plogp = where(g, gt(g, p, scalar(g, 0, DType::F32, at), at),
                         mul(g, p, log_softmax(g, s, -1, at), at), scalar(g, 0, DType::F32, at), at);
    tap(g, "attention/entropy", neg(g, mean_all(g, sum(g, plogp, -1, false, at), at), at), at);
    tap(g, "attention/max", mean_all(g, max(g, p, -1, false, at), at), at);
  }
  return y;
}

NodeId embed(Graph& g, NodeId ids, NodeId table, Span at) {
  need_dtype(g, ids, DType::I32, "embed", "ids", at);
  need_float(g, table, "embed", at);
  const Shape st = node(g, table).shape;
  if (st.rank != 2)
    throw user_error(Code::SHAPE_009, at, "embed: expected a table [vocab, d], found {}", st.str());
  Dims out = node(g, ids).shape.vec();
  out.push_back(st[1]);
  return make(g, Op::Embed, node(g, table).dtype, to_shape(out, at), {ids, table}, at);
}

void check_vocab(const Graph& g, NodeId table, int64_t vocab, Span at) {
  const Shape st = node(g, table).shape;
  if (st.rank >= 1 && st[0] < vocab)
    throw UserError(
        Code::SHAPE_013, at,
        fmt::format("expected an embedding of at least {} rows (the vocabulary), found {}", vocab, st.str()),
        fmt::format("make the table [{}, {}]", vocab, st.rank >= 2 ? st[1] : 0));
}

namespace {
// logits [..., vocab] with i32 targets [...].
void check_targets(const Graph& g, const char* op, NodeId logits, NodeId targets, Span at) {
  need_float(g, logits, op, at);
  need_dtype(g, targets, DType::I32, op, "targets", at);
  const Shape sl = node(g, logits).shape, st = node(g, targets).shape;
  bool fits = sl.rank >= 1 && st.rank == sl.rank - 1;
  for (int d = 0; fits && d < st.rank; ++d) fits = sl[d] == st[d];
  if (!fits)
    throw user_error(Code::SHAPE_009, at,
                     "{}: expected logits [..., vocab] and targets [...], found {} and {}", op, sl.str(),
                     st.str());
}
}  // namespace

NodeId cross_entropy(Graph& g, NodeId logits, NodeId targets, Span at) {
  check_targets(g, "cross-entropy", logits, targets, at);
  NodeId y = make(g, Op::CrossEntropy, DType::F32, Shape{}, {logits, targets}, at);
  if (g.builtin_taps) {
    NodeId l = stop_gradient(g, logits, at);
    NodeId m = mean_all(g, l, at);
    NodeId d = sub(g, l, m, at);
    tap(g, "logits/mean", m, at);
    tap(g, "logits/std", sqrt(g, mean_all(g, mul(g, d, d, at), at), at), at);
    tap(g, "logits/max", max(g, reshape(g, l, {-1}, at), 0, false, at), at);
  }
  return y;
}

NodeId accuracy(Graph& g, NodeId logits, NodeId targets, Span at) {
  check_targets(g, "accuracy", logits, targets, at);
  return make(g, Op::Accuracy, DType::F32, Shape{}, {logits, targets}, at);
}

NodeId dropout(Graph& g, NodeId x, double p, uint64_t seed, uint32_t stream, Span at) {
  need_float(g, x, "dropout", at);
  if (!(p >= 0 && p < 1)) throw user_error(Code::SHAPE_014, at, "dropout: expected p in [0, 1), found {}", p);
  if (p == 0) return x;
  Attrs a;
  a.value = p;
  a.seed = seed;
  a.stream = stream;
  return make(g, Op::Dropout, node(g, x).dtype, node(g, x).shape, {x}, at, a);
}

NodeId stop_gradient(Graph& g, NodeId x, Span at) {
  return make(g, Op::StopGradient, node(g, x).dtype, node(g, x).shape, {x}, at);
}

NodeId tap(Graph& g, const std::string& name, NodeId x, Span at) {
  SX_ASSERT(!name.empty(), "a tap needs a name");
  if (node(g, x).shape.rank != 0)
    throw UserError(Code::SHAPE_010, at,
                    fmt::format("tap `{}`: expected a scalar [], found {}", name, node(g, x).shape.str()),
                    "reduce it first, e.g. (tap \"" + name + "\" (mean x))");
  Attrs a;
  a.name = name;
  return make(g, Op::Tap, node(g, x).dtype, Shape{}, {x}, at, a);
}

}  // namespace sx::ops
