// The role of each node in the grouping: what kind of kernel it can start
// or join (lower.cpp), and the fusion rule by which it joins one.
#include "backend/cuda/lower_internal.h"

namespace sx::cuda::detail {

namespace {

bool last_axis(const Node& n, const Graph& g) {
  const Shape& in = g.node(n.inputs[0]).shape;
  return in.rank > 0 && n.attrs.axis == in.rank - 1;
}

}  // namespace

void mark_skipped(const Graph& g, const plan::Plan& p, const std::vector<bool>& is_output, std::vector<bool>& skip,
                  std::vector<bool>& inline_) {
  for (NodeId id : p.schedule) {
    const Node& n = g.node(id);
    if (op_kind(n.op) == OpKind::Leaf) {
      skip[id] = true;
      inline_[id] = n.op == Op::Full || n.op == Op::Arange;
      continue;
    }
    if (p.view[id]) {
      skip[id] = true;
      continue;
    }
    if (n.op == Op::RoundBf16 && g.node(resolve_view(p, g, n.inputs[0])).op == Op::Param) {
      skip[id] = true;
      continue;
    }
    bool elem = op_kind(n.op) == OpKind::Unary || op_kind(n.op) == OpKind::Binary || op_kind(n.op) == OpKind::Ternary ||
                n.op == Op::Reshape;
    bool all_inline = elem && !n.inputs.empty();
    for (NodeId in : n.inputs) all_inline = all_inline && inline_[resolve_view(p, g, in)];
    if (all_inline && !is_output[id]) skip[id] = true, inline_[id] = true;
  }
}

Role role_of(const Graph& g, const plan::Plan& p, NodeId id, const std::vector<bool>& skip) {
  const Node& n = g.node(id);
  if (skip[id]) return Role::Skip;
  switch (op_kind(n.op)) {
    case OpKind::Leaf:
      return Role::Skip;
    case OpKind::Unary:
    case OpKind::Binary:
    case OpKind::Ternary:
      return Role::Elem;
    case OpKind::Matrix:
      return Role::Matmul;
    case OpKind::Reduce:
      return last_axis(n, g) ? Role::RowOp : Role::ColOp;
    case OpKind::Control:
      return p.view[id] ? Role::Skip : Role::Elem;
    case OpKind::Shape:
      switch (n.op) {
        case Op::Gather:
          return Role::GatherOp;
        case Op::ScatterAdd:
          return Role::ScatterOp;
        case Op::SumTo:
          return Role::ColOp;
        default:
          return p.view[id] ? Role::Skip : Role::Index;
      }
    case OpKind::Fused:
      switch (n.op) {
        case Op::Softmax:
        case Op::LogSoftmax:
          return last_axis(n, g) ? Role::RowOp : Role::Index;
        case Op::LayerNorm:
        case Op::RmsNorm:
          return Role::RowOp;
        case Op::Attention:
          return Role::Attn;
        case Op::Embed:
          return Role::GatherOp;
        case Op::CrossEntropy:
        case Op::Accuracy:
          return Role::LossOp;
        case Op::Dropout:
          return Role::Elem;
        default:
          break;
      }
  }
  return Role::Elem;
}

FusionRule join_rule(LaunchKind kind, bool late, Op op, Role role) {
  switch (kind) {
    case LaunchKind::Map:
      if (late) return FusionRule::LateElementwise;
      if (role == Role::RowOp || role == Role::LossOp) return FusionRule::RowPrologue;
      if (role == Role::ColOp || role == Role::ScatterOp) return FusionRule::ColumnPrologue;
      return FusionRule::ElementwiseChain;
    case LaunchKind::Row:
    case LaunchKind::Loss:
      if (late) return FusionRule::LateElementwise;
      return role == Role::RowOp || role == Role::LossOp ? FusionRule::RowChain : FusionRule::RowEpilogue;
    case LaunchKind::Gemm:
      if (op == Op::Add) return FusionRule::GemmBias;
      if (op == Op::Gelu) return FusionRule::GemmGelu;
      if (op == Op::Mul) return FusionRule::GemmDGelu;
      if (op == Op::SumTo) return FusionRule::GemmBiasGrad;
      return FusionRule::GemmBf16Out;
    case LaunchKind::Attention:
      return FusionRule::AttentionLayout;
    case LaunchKind::Gather:
      return late ? FusionRule::LateElementwise : FusionRule::GatherEpilogue;
    default:  // a column kernel's elementwise after its reduction
      return FusionRule::LateElementwise;
  }
}

}  // namespace sx::cuda::detail
