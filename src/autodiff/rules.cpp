// One gradient rule per op. The table at the bottom is generated from
// ops.def, so a new op does not compile until it has a rule here.
#include "autodiff/rules.h"

namespace sx::autodiff {

using namespace sx::ops;

namespace {

NodeId num(GradCtx& c, double v) { return scalar(c.g, v, DType::F32, c.at()); }

// The gradient of an operand that was broadcast: summed back to its shape.
NodeId unbroadcast(GradCtx& c, NodeId grad, NodeId operand) {
  Shape s = c.shape(operand);
  return c.shape(grad) == s ? grad : sum_to(c.g, grad, s, c.at());
}

// A reduction's output (or its gradient) with the reduced axis back as 1.
NodeId keep_axis(GradCtx& c, NodeId v) {
  if (c.n.attrs.keep) return v;
  Shape s = c.shape(c.in(0));
  s[c.n.attrs.axis] = 1;
  return reshape(c.g, v, s.vec(), c.at());
}

void set_unary(GradCtx& c, NodeId g) { c.gx[0] = g; }

void none(GradCtx&) {}

// Leaves and ops with no gradient.
void grad_Input(GradCtx& c) { none(c); }
void grad_Param(GradCtx& c) { none(c); }
void grad_Full(GradCtx& c) { none(c); }
void grad_Arange(GradCtx& c) { none(c); }
void grad_Sign(GradCtx& c) { none(c); }      // zero almost everywhere
void grad_GeluGrad(GradCtx& c) { none(c); }  // only reached by double backward, which sexpgpu does not do
void grad_Eq(GradCtx& c) { none(c); }
void grad_Ne(GradCtx& c) { none(c); }
void grad_Lt(GradCtx& c) { none(c); }
void grad_Le(GradCtx& c) { none(c); }
void grad_Gt(GradCtx& c) { none(c); }
void grad_Ge(GradCtx& c) { none(c); }
void grad_Argmax(GradCtx& c) { none(c); }
void grad_Accuracy(GradCtx& c) { none(c); }
void grad_StopGradient(GradCtx& c) { none(c); }

void grad_Cast(GradCtx& c) {
  DType from = c.g.node(c.in(0)).dtype;
  if (is_float(from) && is_float(c.n.dtype)) set_unary(c, cast(c.g, c.gy, from, c.at()));
}

void grad_Neg(GradCtx& c) { set_unary(c, neg(c.g, c.gy, c.at())); }
void grad_Exp(GradCtx& c) { set_unary(c, mul(c.g, c.gy, c.y, c.at())); }
void grad_Log(GradCtx& c) { set_unary(c, div(c.g, c.gy, c.in(0), c.at())); }
void grad_Sqrt(GradCtx& c) { set_unary(c, div(c.g, c.gy, mul(c.g, c.y, num(c, 2), c.at()), c.at())); }
void grad_Rsqrt(GradCtx& c) {
  // d x^-1/2 = -1/2 x^-3/2 = -1/2 y^3
  NodeId y3 = mul(c.g, c.y, mul(c.g, c.y, c.y, c.at()), c.at());
  set_unary(c, mul(c.g, c.gy, mul(c.g, y3, num(c, -0.5), c.at()), c.at()));
}
void grad_Sin(GradCtx& c) { set_unary(c, mul(c.g, c.gy, cos(c.g, c.in(0), c.at()), c.at())); }
void grad_Cos(GradCtx& c) {
  set_unary(c, neg(c.g, mul(c.g, c.gy, sin(c.g, c.in(0), c.at()), c.at()), c.at()));
}
void grad_Tanh(GradCtx& c) {
  NodeId d = sub(c.g, num(c, 1), mul(c.g, c.y, c.y, c.at()), c.at());
  set_unary(c, mul(c.g, c.gy, d, c.at()));
}
void grad_Sigmoid(GradCtx& c) {
  NodeId d = mul(c.g, c.y, sub(c.g, num(c, 1), c.y, c.at()), c.at());
  set_unary(c, mul(c.g, c.gy, d, c.at()));
}
void grad_Relu(GradCtx& c) {
  NodeId x = c.in(0);
  NodeId zero = scalar(c.g, 0, c.g.node(x).dtype, c.at());
  set_unary(c, where(c.g, gt(c.g, x, zero, c.at()), c.gy, num(c, 0), c.at()));
}
void grad_Gelu(GradCtx& c) {
  set_unary(c, mul(c.g, c.gy, unary(c.g, Op::GeluGrad, c.in(0), c.at()), c.at()));
}
void grad_Silu(GradCtx& c) {
  // d x s(x) = s (1 + x (1 - s))
  NodeId x = c.in(0), s = sigmoid(c.g, x, c.at());
  NodeId d =
      mul(c.g, s, add(c.g, num(c, 1), mul(c.g, x, sub(c.g, num(c, 1), s, c.at()), c.at()), c.at()), c.at());
  set_unary(c, mul(c.g, c.gy, d, c.at()));
}
void grad_Abs(GradCtx& c) { set_unary(c, mul(c.g, c.gy, sign(c.g, c.in(0), c.at()), c.at())); }
// Straight through, and rounded itself: the gradient of a value a GPU keeps
// in bf16 is kept in bf16 too (as torch's backward of a cast to bfloat16).
void grad_RoundBf16(GradCtx& c) { set_unary(c, round_bf16(c.g, c.gy, c.at())); }

void grad_Add(GradCtx& c) {
  if (c.wants[0]) c.gx[0] = unbroadcast(c, c.gy, c.in(0));
  if (c.wants[1]) c.gx[1] = unbroadcast(c, c.gy, c.in(1));
}
void grad_Sub(GradCtx& c) {
  if (c.wants[0]) c.gx[0] = unbroadcast(c, c.gy, c.in(0));
  if (c.wants[1]) c.gx[1] = unbroadcast(c, neg(c.g, c.gy, c.at()), c.in(1));
}
void grad_Mul(GradCtx& c) {
  if (c.wants[0]) c.gx[0] = unbroadcast(c, mul(c.g, c.gy, c.in(1), c.at()), c.in(0));
  if (c.wants[1]) c.gx[1] = unbroadcast(c, mul(c.g, c.gy, c.in(0), c.at()), c.in(1));
}
void grad_Div(GradCtx& c) {
  if (c.wants[0]) c.gx[0] = unbroadcast(c, div(c.g, c.gy, c.in(1), c.at()), c.in(0));
  if (c.wants[1]) {
    NodeId d = neg(c.g, div(c.g, mul(c.g, c.gy, c.y, c.at()), c.in(1), c.at()), c.at());  // -g a / b^2
    c.gx[1] = unbroadcast(c, d, c.in(1));
  }
}
void grad_Pow(GradCtx& c) {
  NodeId a = c.in(0), b = c.in(1);
  if (c.wants[0]) {
    NodeId d = mul(c.g, b, pow(c.g, a, sub(c.g, b, num(c, 1), c.at()), c.at()), c.at());
    c.gx[0] = unbroadcast(c, mul(c.g, c.gy, d, c.at()), a);
  }
  if (c.wants[1]) {
    NodeId d = mul(c.g, c.y, log(c.g, a, c.at()), c.at());
    c.gx[1] = unbroadcast(c, mul(c.g, c.gy, d, c.at()), b);
  }
}
// The gradient goes to the operand the forward picked (a on ties).
void select_grad(GradCtx& c, NodeId picked_a) {
  if (c.wants[0]) c.gx[0] = unbroadcast(c, where(c.g, picked_a, c.gy, num(c, 0), c.at()), c.in(0));
  if (c.wants[1]) c.gx[1] = unbroadcast(c, where(c.g, picked_a, num(c, 0), c.gy, c.at()), c.in(1));
}
void grad_Maximum(GradCtx& c) { select_grad(c, ge(c.g, c.in(0), c.in(1), c.at())); }
void grad_Minimum(GradCtx& c) { select_grad(c, le(c.g, c.in(0), c.in(1), c.at())); }
void grad_Where(GradCtx& c) {
  NodeId cond = c.in(0);
  if (c.wants[1]) c.gx[1] = unbroadcast(c, where(c.g, cond, c.gy, num(c, 0), c.at()), c.in(1));
  if (c.wants[2]) c.gx[2] = unbroadcast(c, where(c.g, cond, num(c, 0), c.gy, c.at()), c.in(2));
}

void grad_Matmul(GradCtx& c) {
  NodeId a = c.in(0), b = c.in(1);
  if (c.wants[0]) c.gx[0] = unbroadcast(c, matmul(c.g, c.gy, transpose(c.g, b, c.at()), c.at()), a);
  if (!c.wants[1]) return;
  Shape sa = c.shape(a), sb = c.shape(b);
  if (sb.rank == 2 && sa.rank > 2) {
    // x [batch..., m, k] . w [k, n]: w's gradient is one product over the
    // flattened batch, xᵀ [k, batch·m] . gy [batch·m, n], not a batched
    // product summed afterwards (one sgemm; the sum runs inside it).
    int64_t rows = 1;
    for (int d = 0; d + 1 < sa.rank; ++d) rows *= sa[d];
    NodeId a2 = reshape(c.g, a, {rows, sa.back()}, c.at());
    NodeId g2 = reshape(c.g, c.gy, {rows, sb.back()}, c.at());
    c.gx[1] = matmul(c.g, transpose(c.g, a2, c.at()), g2, c.at());
    return;
  }
  c.gx[1] = unbroadcast(c, matmul(c.g, transpose(c.g, a, c.at()), c.gy, c.at()), b);
}

void grad_Sum(GradCtx& c) { set_unary(c, expand(c.g, keep_axis(c, c.gy), c.shape(c.in(0)), c.at())); }
void grad_Mean(GradCtx& c) {
  double n = static_cast<double>(c.shape(c.in(0))[c.n.attrs.axis]);
  NodeId g = expand(c.g, keep_axis(c, c.gy), c.shape(c.in(0)), c.at());
  set_unary(c, mul(c.g, g, num(c, 1.0 / n), c.at()));
}
void grad_Max(GradCtx& c) {
  // Only the first maximum gets the gradient, as argmax picks it.
  NodeId x = c.in(0);
  Shape s = c.shape(x);
  int axis = c.n.attrs.axis;
  Shape line;
  line.rank = s.rank;
  for (int d = 0; d < s.rank; ++d) line[d] = d == axis ? s[d] : 1;
  NodeId idx = reshape(c.g, arange(c.g, s[axis], DType::I32, c.at()), line.vec(), c.at());
  NodeId first = eq(c.g, idx, argmax(c.g, x, axis, true, c.at()), c.at());
  set_unary(c, where(c.g, first, keep_axis(c, c.gy), num(c, 0), c.at()));
}
void grad_LogSumExp(GradCtx& c) {
  NodeId soft = exp(c.g, sub(c.g, c.in(0), keep_axis(c, c.y), c.at()), c.at());
  set_unary(c, mul(c.g, keep_axis(c, c.gy), soft, c.at()));
}

void grad_Reshape(GradCtx& c) { set_unary(c, reshape(c.g, c.gy, c.shape(c.in(0)).vec(), c.at())); }
void grad_Permute(GradCtx& c) {
  std::vector<int> inverse(c.n.shape.rank);
  for (int d = 0; d < c.n.shape.rank; ++d) inverse[c.n.attrs.perm[d]] = d;
  set_unary(c, permute(c.g, c.gy, inverse, c.at()));
}
void grad_Slice(GradCtx& c) {
  int64_t n = c.shape(c.in(0))[c.n.attrs.axis];
  set_unary(c, pad(c.g, c.gy, c.n.attrs.axis, c.n.attrs.start, n - c.n.attrs.end, c.at()));
}
void grad_Concat(GradCtx& c) {
  int64_t start = 0;
  for (size_t i = 0; i < c.n.inputs.size(); ++i) {
    int64_t len = c.shape(c.in(i))[c.n.attrs.axis];
    if (c.wants[i]) c.gx[i] = slice(c.g, c.gy, c.n.attrs.axis, start, start + len, c.at());
    start += len;
  }
}
void grad_Gather(GradCtx& c) {
  int64_t n = c.shape(c.in(0))[c.n.attrs.axis];
  c.gx[0] = scatter_add(c.g, c.gy, c.in(1), c.n.attrs.axis, n, c.at());
}
void grad_Expand(GradCtx& c) { set_unary(c, sum_to(c.g, c.gy, c.shape(c.in(0)), c.at())); }
void grad_SumTo(GradCtx& c) { set_unary(c, expand(c.g, c.gy, c.shape(c.in(0)), c.at())); }
void grad_Pad(GradCtx& c) {
  int64_t n = c.shape(c.in(0))[c.n.attrs.axis];
  set_unary(c, slice(c.g, c.gy, c.n.attrs.axis, c.n.attrs.start, c.n.attrs.start + n, c.at()));
}
void grad_ScatterAdd(GradCtx& c) { c.gx[0] = gather(c.g, c.gy, c.in(1), c.n.attrs.axis, c.at()); }

void grad_Softmax(GradCtx& c) {
  int axis = c.n.attrs.axis;
  NodeId dot = sum(c.g, mul(c.g, c.gy, c.y, c.at()), axis, true, c.at());
  set_unary(c, mul(c.g, c.y, sub(c.g, c.gy, dot, c.at()), c.at()));
}
void grad_LogSoftmax(GradCtx& c) {
  NodeId total = sum(c.g, c.gy, c.n.attrs.axis, true, c.at());
  set_unary(c, sub(c.g, c.gy, mul(c.g, exp(c.g, c.y, c.at()), total, c.at()), c.at()));
}

// layer-norm and rms-norm: with xhat the normalised x and r = 1/sqrt(var + eps),
// dx = r (dxhat - [mean(dxhat)] - xhat mean(dxhat xhat)), dxhat = gy gain.
void norm_grads(GradCtx& c, bool centre) {
  Graph& g = c.g;
  Span at = c.at();
  NodeId x = c.in(0), gain = c.in(1);
  NodeId xc = centre ? sub(g, x, mean(g, x, -1, true, at), at) : x;
  NodeId var = mean(g, mul(g, xc, xc, at), -1, true, at);
  NodeId r = rsqrt(g, add(g, var, num(c, c.n.attrs.value), at), at);
  NodeId xhat = mul(g, xc, r, at);
  if (c.wants[0]) {
    NodeId dxhat = mul(g, c.gy, gain, at);
    NodeId inner = sub(g, dxhat, mul(g, xhat, mean(g, mul(g, dxhat, xhat, at), -1, true, at), at), at);
    if (centre) inner = sub(g, inner, mean(g, dxhat, -1, true, at), at);
    c.gx[0] = mul(g, r, inner, at);
  }
  if (c.wants[1]) c.gx[1] = sum_to(g, mul(g, c.gy, xhat, at), c.shape(gain), at);
  if (centre && c.wants[2]) c.gx[2] = sum_to(g, c.gy, c.shape(c.in(2)), at);
}
void grad_LayerNorm(GradCtx& c) { norm_grads(c, true); }
void grad_RmsNorm(GradCtx& c) { norm_grads(c, false); }

void grad_Attention(GradCtx& c) {
  Graph& g = c.g;
  Span at = c.at();
  NodeId q = c.in(0), k = c.in(1), v = c.in(2);
  double scale = c.n.attrs.value;
  NodeId p = attention_weights(g, q, k, c.n.attrs.causal, scale, at);
  if (c.wants[2]) c.gx[2] = matmul(g, transpose(g, p, at), c.gy, at);
  if (!c.wants[0] && !c.wants[1]) return;
  NodeId dp = matmul(g, c.gy, transpose(g, v, at), at);
  NodeId ds = mul(g, p, sub(g, dp, sum(g, mul(g, dp, p, at), -1, true, at), at), at);
  ds = mul(g, ds, num(c, scale), at);
  if (c.wants[0]) c.gx[0] = matmul(g, ds, k, at);
  if (c.wants[1]) c.gx[1] = matmul(g, transpose(g, ds, at), q, at);
}

void grad_Embed(GradCtx& c) { c.gx[1] = scatter_add(c.g, c.gy, c.in(0), 0, c.shape(c.in(1))[0], c.at()); }

void grad_CrossEntropy(GradCtx& c) {
  // (softmax(logits) - onehot(targets)) * gy / positions
  Graph& g = c.g;
  Span at = c.at();
  NodeId logits = c.in(0), targets = c.in(1);
  Shape sl = c.shape(logits), st = c.shape(targets);
  Shape line;
  line.rank = sl.rank;
  for (int d = 0; d < sl.rank; ++d) line[d] = d == sl.rank - 1 ? sl.back() : 1;
  NodeId classes = reshape(g, arange(g, sl.back(), DType::I32, at), line.vec(), at);
  Shape tcol = st;
  tcol[tcol.rank++] = 1;
  NodeId onehot = cast(g, eq(g, classes, reshape(g, targets, tcol.vec(), at), at), DType::F32, at);
  NodeId d = sub(g, softmax(g, logits, -1, at), onehot, at);
  double n = static_cast<double>(st.numel());
  c.gx[0] = mul(g, d, mul(g, c.gy, num(c, 1.0 / n), at), at);
}

void grad_Dropout(GradCtx& c) {
  // The same key and the same element indices draw the same mask.
  set_unary(c, dropout(c.g, c.gy, c.n.attrs.value, c.n.attrs.seed, c.n.attrs.stream, c.at()));
}

void grad_Tap(GradCtx& c) { set_unary(c, c.gy); }

constexpr Rule kRules[] = {
#define SX_OP(name, str, arity, kind, meaning) &grad_##name,
#include "graph/ops.def"
#undef SX_OP
};
static_assert(sizeof(kRules) / sizeof(kRules[0]) == kNumOps);

}  // namespace

Rule rule_for(Op op) { return kRules[static_cast<int>(op)]; }

}  // namespace sx::autodiff
