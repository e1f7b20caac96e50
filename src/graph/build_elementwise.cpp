// Constructors for leaves, elementwise ops, matmul and reductions.
#include <cmath>

#include "graph/build_util.h"

namespace sx::ops {

using namespace detail;

NodeId input(Graph& g, const std::string& name, const Dims& shape, DType dtype, Span at) {
  SX_ASSERT(!name.empty() && g.find_input(name) == kNoNode, "input names must be unique and non-empty");
  Attrs a;
  a.name = name;
  return make(g, Op::Input, dtype, to_shape(shape, at), {}, at, a);
}

NodeId param(Graph& g, const std::string& path, const Dims& shape, Init init, Span at, DType dtype) {
  if (NodeId first = g.find_param(path); first != kNoNode) {
    Diagnostic d{Code::SHAPE_007,
                 fmt::format("a parameter at `{}` was already made in this trace", path),
                 at,
                 {},
                 "give each layer its own (scope ...), or pass the tensor itself to share it"};
    std::string where = Sources::global().where(g.node(first).span);
    d.notes.push_back(fmt::format("first made at {}", where.empty() ? "(no position)" : where));
    throw UserError(std::move(d));
  }
  if (!is_float(dtype))
    throw user_error(Code::SHAPE_005, at, "param: expected a float type, found {}", dtype_name(dtype));
  Node n;
  n.op = Op::Param;
  n.dtype = dtype;
  n.shape = to_shape(shape, at);
  n.attrs.init = init;
  n.path = path;
  n.span = at;
  return g.add(std::move(n));
}

NodeId full(Graph& g, const Dims& shape, double value, DType dtype, Span at) {
  Attrs a;
  a.value = value;
  return make(g, Op::Full, dtype, to_shape(shape, at), {}, at, a);
}

NodeId scalar(Graph& g, double value, DType dtype, Span at) { return full(g, {}, value, dtype, at); }

NodeId arange(Graph& g, int64_t n, DType dtype, Span at) {
  if (n < 0) throw user_error(Code::SHAPE_014, at, "arange: expected n >= 0, found {}", n);
  if (dtype == DType::Bool)
    throw user_error(Code::SHAPE_005, at, "arange: expected a number type, found bool");
  Attrs a;
  a.end = n;
  return make(g, Op::Arange, dtype, Shape{n}, {}, at, a);
}

NodeId cast(Graph& g, NodeId x, DType dtype, Span at) {
  return make(g, Op::Cast, dtype, node(g, x).shape, {x}, at);
}

NodeId unary(Graph& g, Op op, NodeId x, Span at) {
  SX_ASSERT(op_kind(op) == OpKind::Unary && op != Op::Cast, "unary() of a non-unary op");
  const Node& n = node(g, x);
  bool int_ok = op == Op::Neg || op == Op::Abs || op == Op::Sign || op == Op::Relu;
  if (!(is_float(n.dtype) || (int_ok && n.dtype == DType::I32))) need_float(g, x, op_name(op), at);
  return make(g, op, n.dtype, n.shape, {x}, at);
}

NodeId neg(Graph& g, NodeId x, Span at) { return unary(g, Op::Neg, x, at); }
NodeId exp(Graph& g, NodeId x, Span at) { return unary(g, Op::Exp, x, at); }
NodeId log(Graph& g, NodeId x, Span at) { return unary(g, Op::Log, x, at); }
NodeId sqrt(Graph& g, NodeId x, Span at) { return unary(g, Op::Sqrt, x, at); }
NodeId rsqrt(Graph& g, NodeId x, Span at) { return unary(g, Op::Rsqrt, x, at); }
NodeId sin(Graph& g, NodeId x, Span at) { return unary(g, Op::Sin, x, at); }
NodeId cos(Graph& g, NodeId x, Span at) { return unary(g, Op::Cos, x, at); }
NodeId tanh(Graph& g, NodeId x, Span at) { return unary(g, Op::Tanh, x, at); }
NodeId sigmoid(Graph& g, NodeId x, Span at) { return unary(g, Op::Sigmoid, x, at); }
NodeId relu(Graph& g, NodeId x, Span at) { return unary(g, Op::Relu, x, at); }
NodeId gelu(Graph& g, NodeId x, Span at) { return unary(g, Op::Gelu, x, at); }
NodeId silu(Graph& g, NodeId x, Span at) { return unary(g, Op::Silu, x, at); }
NodeId abs(Graph& g, NodeId x, Span at) { return unary(g, Op::Abs, x, at); }
NodeId sign(Graph& g, NodeId x, Span at) { return unary(g, Op::Sign, x, at); }
NodeId round_bf16(Graph& g, NodeId x, Span at) { return unary(g, Op::RoundBf16, x, at); }

namespace {

// When the lower-rank shape only lacks some 1s to line up (a common mistake:
// [8,16,32] with [8,32]), suggests the reshape that makes it broadcast.
std::string broadcast_help(const Shape& a, const Shape& b) {
  const Shape& big = a.rank >= b.rank ? a : b;
  const Shape& small = a.rank >= b.rank ? b : a;
  if (small.rank == big.rank) return {};
  Shape fixed;
  fixed.rank = big.rank;
  int j = small.rank - 1;
  for (int d = big.rank - 1; d >= 0; --d) fixed[d] = (j >= 0 && small[j] == big[d]) ? small[j--] : 1;
  if (j >= 0) return {};
  return fmt::format("reshape the {} operand to {} to broadcast it", small.str(), fixed.str());
}

Shape broadcast_or_throw(const Shape& a, const Shape& b, Span at) {
  Shape out;
  if (!broadcast_shapes(a, b, &out))
    throw UserError(Code::SHAPE_001, at,
                    fmt::format("expected shapes that broadcast, found {} and {}", a.str(), b.str()),
                    broadcast_help(a, b));
  return out;
}

// f32 with bf16 gives f32: the wider type wins.
DType join_dtypes(const Graph& g, NodeId a, NodeId b, const char* op, Span at) {
  DType x = node(g, a).dtype, y = node(g, b).dtype;
  if (x == y) return x;
  if (is_float(x) && is_float(y)) return DType::F32;
  throw UserError(Code::SHAPE_005, at,
                  fmt::format("{}: expected operands of one element type, found {} and {}", op, dtype_name(x),
                              dtype_name(y)),
                  "convert one with (cast x ...)");
}

bool is_comparison(Op op) {
  return op == Op::Eq || op == Op::Ne || op == Op::Lt || op == Op::Le || op == Op::Gt || op == Op::Ge;
}

}  // namespace

NodeId binary(Graph& g, Op op, NodeId a, NodeId b, Span at) {
  SX_ASSERT(op_kind(op) == OpKind::Binary, "binary() of a non-binary op");
  DType dt = join_dtypes(g, a, b, op_name(op), at);
  bool cmp = is_comparison(op);
  bool int_ok =
      cmp || op == Op::Add || op == Op::Sub || op == Op::Mul || op == Op::Maximum || op == Op::Minimum;
  bool bool_ok = op == Op::Eq || op == Op::Ne;
  if (!(is_float(dt) || (int_ok && dt == DType::I32) || (bool_ok && dt == DType::Bool)))
    need_float(g, a, op_name(op), at);
  Shape s = broadcast_or_throw(node(g, a).shape, node(g, b).shape, at);
  return make(g, op, cmp ? DType::Bool : dt, s, {a, b}, at);
}

NodeId add(Graph& g, NodeId a, NodeId b, Span at) { return binary(g, Op::Add, a, b, at); }
NodeId sub(Graph& g, NodeId a, NodeId b, Span at) { return binary(g, Op::Sub, a, b, at); }
NodeId mul(Graph& g, NodeId a, NodeId b, Span at) { return binary(g, Op::Mul, a, b, at); }
NodeId div(Graph& g, NodeId a, NodeId b, Span at) { return binary(g, Op::Div, a, b, at); }
NodeId pow(Graph& g, NodeId a, NodeId b, Span at) { return binary(g, Op::Pow, a, b, at); }
NodeId maximum(Graph& g, NodeId a, NodeId b, Span at) { return binary(g, Op::Maximum, a, b, at); }
NodeId minimum(Graph& g, NodeId a, NodeId b, Span at) { return binary(g, Op::Minimum, a, b, at); }
NodeId eq(Graph& g, NodeId a, NodeId b, Span at) { return binary(g, Op::Eq, a, b, at); }
NodeId ne(Graph& g, NodeId a, NodeId b, Span at) { return binary(g, Op::Ne, a, b, at); }
NodeId lt(Graph& g, NodeId a, NodeId b, Span at) { return binary(g, Op::Lt, a, b, at); }
NodeId le(Graph& g, NodeId a, NodeId b, Span at) { return binary(g, Op::Le, a, b, at); }
NodeId gt(Graph& g, NodeId a, NodeId b, Span at) { return binary(g, Op::Gt, a, b, at); }
NodeId ge(Graph& g, NodeId a, NodeId b, Span at) { return binary(g, Op::Ge, a, b, at); }

NodeId where(Graph& g, NodeId cond, NodeId a, NodeId b, Span at) {
  need_dtype(g, cond, DType::Bool, "where", "a condition", at);
  DType dt = join_dtypes(g, a, b, "where", at);
  Shape s = broadcast_or_throw(node(g, a).shape, node(g, b).shape, at);
  s = broadcast_or_throw(node(g, cond).shape, s, at);
  return make(g, Op::Where, dt, s, {cond, a, b}, at);
}

NodeId matmul(Graph& g, NodeId a, NodeId b, Span at) {
  const Shape &sa = node(g, a).shape, &sb = node(g, b).shape;
  auto mismatch = [&](const char* what) {
    return user_error(Code::SHAPE_002, at, "matmul: expected {}, found {} and {}", what, sa.str(), sb.str());
  };
  if (sa.rank < 2 || sb.rank < 2) throw mismatch("operands of rank 2 or more");
  if (sa.back() != sb[sb.rank - 2]) {
    UserError e = mismatch("[..., m, k] and [..., k, n]");
    if (sa.back() == sb.back()) e.first().help = "transpose the second operand: (matmul a (transpose b))";
    throw e;
  }
  DType dt = join_dtypes(g, a, b, "matmul", at);
  if (!is_float(dt)) need_float(g, a, "matmul", at);
  Shape ba, bb, batch;
  ba.rank = sa.rank - 2;
  bb.rank = sb.rank - 2;
  for (int d = 0; d < ba.rank; ++d) ba[d] = sa[d];
  for (int d = 0; d < bb.rank; ++d) bb[d] = sb[d];
  if (!broadcast_shapes(ba, bb, &batch)) throw mismatch("leading dimensions that broadcast");
  Dims out = batch.vec();
  out.push_back(sa[sa.rank - 2]);
  out.push_back(sb.back());
  return make(g, Op::Matmul, dt, to_shape(out, at), {a, b}, at);
}

NodeId reduce(Graph& g, Op op, NodeId x, int axis, bool keep, Span at) {
  SX_ASSERT(op_kind(op) == OpKind::Reduce, "reduce() of a non-reduction");
  const Node& n = node(g, x);
  bool int_ok = op == Op::Sum || op == Op::Max || op == Op::Argmax;
  if (!(is_float(n.dtype) || (int_ok && n.dtype == DType::I32))) need_float(g, x, op_name(op), at);
  Attrs a;
  a.axis = norm_axis(g, x, axis, op_name(op), at);
  a.keep = keep;
  Shape s = n.shape;
  if (keep) {
    s[a.axis] = 1;
  } else {
    for (int d = a.axis; d + 1 < s.rank; ++d) s[d] = s[d + 1];
    s[--s.rank] = 0;
  }
  return make(g, op, op == Op::Argmax ? DType::I32 : n.dtype, s, {x}, at, a);
}

NodeId sum(Graph& g, NodeId x, int axis, bool keep, Span at) { return reduce(g, Op::Sum, x, axis, keep, at); }
NodeId mean(Graph& g, NodeId x, int axis, bool keep, Span at) {
  return reduce(g, Op::Mean, x, axis, keep, at);
}
NodeId max(Graph& g, NodeId x, int axis, bool keep, Span at) { return reduce(g, Op::Max, x, axis, keep, at); }
NodeId logsumexp(Graph& g, NodeId x, int axis, bool keep, Span at) {
  return reduce(g, Op::LogSumExp, x, axis, keep, at);
}
NodeId argmax(Graph& g, NodeId x, int axis, bool keep, Span at) {
  return reduce(g, Op::Argmax, x, axis, keep, at);
}

NodeId sum_all(Graph& g, NodeId x, Span at) {
  return sum(g, reshape(g, x, {node(g, x).shape.numel()}, at), 0, false, at);
}
NodeId mean_all(Graph& g, NodeId x, Span at) {
  return mean(g, reshape(g, x, {node(g, x).shape.numel()}, at), 0, false, at);
}

}  // namespace sx::ops
