#include "backend/cuda/lower.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "backend/cuda/lower_internal.h"
#include "util/error.h"

namespace sx::cuda {

using namespace detail;

namespace {

// How a node takes part in a kernel.
enum class Role : uint8_t {
  Skip,    // computed by nothing here: a leaf fed or bound, a view, an inline constant, a weight copy
  Elem,    // elementwise over its shape, inputs broadcast
  RowOp,   // a reduction along the last axis, softmax, a norm
  LossOp,  // cross-entropy, accuracy: rows then their mean
  ColOp,   // a reduction over another axis, sum-to
  Index,   // reads its input at other positions: slice, pad, concat, permute, expand, reshape copy
  Matmul,
  Attn,
  GatherOp,
  ScatterOp,
};

bool last_axis(const Node& n, const Graph& g) {
  const Shape& in = g.node(n.inputs[0]).shape;
  return in.rank > 0 && n.attrs.axis == in.rank - 1;
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

// The shape a row kernel iterates over when `id` is its reduction.
Shape row_domain(const Graph& g, NodeId id) { return g.node(g.node(id).inputs[0]).shape; }

bool same_rows(const Shape& a, const Shape& b) {
  return a.rank > 0 && b.rank > 0 && a.numel() == b.numel() && a.back() == b.back();
}
// A per-row statistic of domain d: [..., 1] (keep) or the rows alone.
bool row_stat(const Shape& s, const Shape& d) { return s.numel() == rows_of(d) && (s.rank == 0 || s.back() == 1); }

struct Group {
  LaunchKind kind = LaunchKind::Map;
  Shape domain;
  bool sealed = false;  // a node outside reads a member: the group may take no more nodes
  bool closed = false;  // its kind takes no more members (a column reduction, attention)
  int gemm_stage = 0;   // 0 plain, 1 bias, 2 gelu, 3 rounded out
  int siblings = 1;     // products of one batched GEMM call
  NodeId root = kNoNode;
  std::vector<NodeId> nodes;
};

class Lowerer {
 public:
  Lowerer(const Graph& g, const plan::Plan& p, Precision precision) : g_(g), p_(p), precision_(precision) {
    group_of_.assign(g.size(), -1);
    skip_.assign(g.size(), false);
    inline_.assign(g.size(), false);
    row_reader_.assign(g.size(), -1);
    gemm_by_b_.assign(g.size(), -1);
    col_sum_of_.assign(g.size(), -1);
    tn_by_a_.assign(g.size(), -1);
    is_output_.assign(g.size(), false);
    for (NodeId o : p.outputs) is_output_[resolve(o)] = true;
    mark_skipped();
  }

  Lowering run() {
    for (NodeId id : p_.schedule) place(id);
    return launches();
  }

 private:
  NodeId resolve(NodeId id) const { return resolve_view(p_, g_, id); }

  // Leaves, views, constants recomputed inline by each reader (full,
  // arange and elementwise functions of them), and a parameter's bf16 copy
  // (written by the optimizer with the update, as llm.c does).
  void mark_skipped() {
    for (NodeId id : p_.schedule) {
      const Node& n = g_.node(id);
      if (op_kind(n.op) == OpKind::Leaf) {
        skip_[id] = true;
        inline_[id] = n.op == Op::Full || n.op == Op::Arange;
        continue;
      }
      if (p_.view[id]) {
        skip_[id] = true;
        continue;
      }
      if (n.op == Op::RoundBf16 && g_.node(resolve(n.inputs[0])).op == Op::Param) {
        skip_[id] = true;
        continue;
      }
      bool elem = op_kind(n.op) == OpKind::Unary || op_kind(n.op) == OpKind::Binary ||
                  op_kind(n.op) == OpKind::Ternary || n.op == Op::Reshape;
      bool all_inline = elem && !n.inputs.empty();
      for (NodeId in : n.inputs) all_inline = all_inline && inline_[resolve(in)];
      if (all_inline && !is_output_[id]) skip_[id] = true, inline_[id] = true;
    }
  }

  bool absorbs(const Group& grp, NodeId id, Role role, NodeId via) const {
    if (grp.sealed || grp.closed) return false;
    const Node& n = g_.node(id);
    const Shape& vs = g_.node(via).shape;
    switch (grp.kind) {
      case LaunchKind::Map:
        if (role == Role::Elem) return vs.numel() == grp.domain.numel() && n.shape.numel() == grp.domain.numel();
        if (role == Role::RowOp || role == Role::LossOp)
          return same_rows(row_domain(g_, id), grp.domain) && vs.numel() == grp.domain.numel();
        if (role == Role::ColOp || role == Role::ScatterOp)
          return vs.numel() == grp.domain.numel() && via == resolve(n.inputs[0]);
        return false;
      case LaunchKind::Row:
      case LaunchKind::Loss: {
        bool full_in = same_rows(vs, grp.domain), stat_in = row_stat(vs, grp.domain);
        if (role == Role::Elem)
          return (full_in || stat_in) && (same_rows(n.shape, grp.domain) || row_stat(n.shape, grp.domain));
        if (role == Role::Index && n.op == Op::Expand) return stat_in && same_rows(n.shape, grp.domain);
        if (role == Role::RowOp || role == Role::LossOp) return full_in && same_rows(row_domain(g_, id), grp.domain);
        return false;
      }
      case LaunchKind::Gemm:
        if (via != grp.root) return false;
        if (n.op == Op::Add && grp.gemm_stage == 0) {
          NodeId other = resolve(n.inputs[0]) == via ? resolve(n.inputs[1]) : resolve(n.inputs[0]);
          const Shape& b = g_.node(other).shape;
          return b.rank == 1 && b[0] == n.shape.back() && n.shape == vs && group_of_[other] != group_of_[via];
        }
        if (n.op == Op::Gelu) return grp.gemm_stage <= 1;
        if (n.op == Op::Mul && grp.gemm_stage == 0) {  // d gelu: the product times gelu'(pre) of a saved pre
          NodeId other = resolve(n.inputs[0]) == via ? resolve(n.inputs[1]) : resolve(n.inputs[0]);
          int q = group_of_[other];
          return g_.node(other).op == Op::GeluGrad && q >= 0 && groups_[q].nodes.size() == 1 && !groups_[q].sealed &&
                 n.shape == vs;
        }
        if (n.op == Op::RoundBf16) return grp.gemm_stage <= 2;
        return false;
      case LaunchKind::Attention:  // stores its output rounded and/or in the layout a permute asks
        return (n.op == Op::RoundBf16 || n.op == Op::Permute) && via == grp.root;
      case LaunchKind::Gather:
        return role == Role::Elem && n.shape.numel() == grp.domain.numel();
      default:
        return false;
    }
  }

  void add_to(int gid, NodeId id, Role role) {
    Group& grp = groups_[gid];
    const Node& n = g_.node(id);
    if (grp.kind == LaunchKind::Map && (role == Role::RowOp || role == Role::LossOp)) {
      grp.kind = role == Role::LossOp ? LaunchKind::Loss : LaunchKind::Row;
      grp.domain = row_domain(g_, id);
    } else if (grp.kind == LaunchKind::Map && role == Role::ColOp) {
      grp.kind = LaunchKind::Column, grp.closed = true;
    } else if (grp.kind == LaunchKind::Map && role == Role::ScatterOp) {
      grp.kind = LaunchKind::Scatter, grp.closed = true;
    } else if (grp.kind == LaunchKind::Row && role == Role::LossOp) {
      grp.kind = LaunchKind::Loss;
    } else if (grp.kind == LaunchKind::Gemm) {
      if (n.op == Op::Add) grp.gemm_stage = 1;
      if (n.op == Op::Mul) grp.gemm_stage = 2;
      if (n.op == Op::SumTo) grp.gemm_stage = 3;
      if (n.op == Op::Gelu) grp.gemm_stage = 2;
      if (n.op == Op::RoundBf16) grp.gemm_stage = 3;
    } else if (grp.kind == LaunchKind::Attention) {
      grp.closed = n.op == Op::Permute;
    }
    grp.nodes.push_back(id);
    grp.root = id;
    group_of_[id] = gid;
  }

  int new_group(NodeId id, Role role) {
    Group grp;
    const Node& n = g_.node(id);
    grp.domain = n.shape;
    switch (role) {
      case Role::RowOp:
        grp.kind = LaunchKind::Row, grp.domain = row_domain(g_, id);
        break;
      case Role::LossOp:
        grp.kind = LaunchKind::Loss, grp.domain = row_domain(g_, id);
        break;
      case Role::ColOp:
        grp.kind = LaunchKind::Column, grp.closed = true, grp.domain = row_domain(g_, id);
        break;
      case Role::Matmul:
        grp.kind = LaunchKind::Gemm;
        break;
      case Role::Attn:
        grp.kind = LaunchKind::Attention;
        break;
      case Role::GatherOp:
        grp.kind = LaunchKind::Gather;
        break;
      case Role::ScatterOp:
        grp.kind = LaunchKind::Scatter, grp.closed = true;
        break;
      default:
        grp.kind = LaunchKind::Map;
        break;
    }
    groups_.push_back(std::move(grp));
    int gid = static_cast<int>(groups_.size()) - 1;
    groups_[gid].nodes.push_back(id);
    groups_[gid].root = id;
    group_of_[id] = gid;
    return gid;
  }

  // Moves every node of `from` into `into` (the smaller list moves).
  void merge(int into, int from) {
    Group& a = groups_[into];
    Group& b = groups_[from];
    for (NodeId m : b.nodes) group_of_[m] = into, a.nodes.push_back(m);
    b.nodes.clear();
    b.sealed = true;
  }

  void place(NodeId id) {
    Role role = role_of(g_, p_, id, skip_);
    if (role == Role::Skip) return;
    const Node& n = g_.node(id);
    int chosen = -1;
    // A row kernel first joins another reader of the same rows (cross-entropy
    // forward and its gradient's softmax: one kernel, probabilities never stored).
    if (role == Role::RowOp || role == Role::LossOp) {
      NodeId x = resolve(n.inputs[0]);
      int r = row_reader_[x];
      if (r >= 0 && !groups_[r].sealed && same_rows(groups_[r].domain, row_domain(g_, id))) chosen = r;
    }
    // A bias gradient is the column sums of a weight gradient's B operand: cuBLASLt's BGRADB epilogue.
    if (role == Role::ColOp && n.op == Op::SumTo && n.shape.rank == 1) {
      int q = gemm_by_b_[resolve(n.inputs[0])];
      if (q >= 0 && !groups_[q].sealed && groups_[q].gemm_stage == 0 &&
          g_.node(product_of(groups_[q])).shape.back() == n.shape[0])
        chosen = q;
    }
    // Column reductions of one domain side by side are one kernel (a norm's gain and bias gradients).
    if (chosen < 0 && role == Role::ColOp && last_column_ >= 0 && !groups_[last_column_].sealed &&
        groups_[last_column_].kind == LaunchKind::Column && groups_[last_column_].domain == row_domain(g_, id))
      chosen = last_column_;
    if (chosen < 0 && (role != Role::Index || n.op == Op::Expand || n.op == Op::Permute)) {
      // Prefer a row kernel: elementwise work joins the reduction that shares its rows.
      for (NodeId raw : n.inputs) {
        NodeId in = resolve(raw);
        int q = group_of_[in];
        if (q >= 0 && (groups_[q].kind == LaunchKind::Row || groups_[q].kind == LaunchKind::Loss) &&
            absorbs(groups_[q], id, role, in)) {
          chosen = q;
          break;
        }
      }
    }
    if (chosen < 0 && (role != Role::Index || n.op == Op::Expand || n.op == Op::Permute))
      for (size_t i = 0; i < n.inputs.size() && chosen < 0; ++i) {
        NodeId in = resolve(n.inputs[i]);
        if (group_of_[in] >= 0 && absorbs(groups_[group_of_[in]], id, role, in)) chosen = group_of_[in];
      }
    if (chosen >= 0) {
      add_to(chosen, id, role);
      if (groups_[chosen].kind == LaunchKind::Gemm && n.op == Op::Mul)  // the d gelu epilogue takes gelu'
        for (NodeId raw : n.inputs)
          if (g_.node(resolve(raw)).op == Op::GeluGrad) merge(chosen, group_of_[resolve(raw)]);
      // Other elementwise producers of the same domain come along as prologue.
      for (NodeId raw : n.inputs) {
        NodeId in = resolve(raw);
        int q = group_of_[in];
        if (q < 0 || q == chosen || groups_[q].sealed || groups_[q].kind != LaunchKind::Map) continue;
        const Group& c = groups_[chosen];
        bool fits = c.kind == LaunchKind::Map || c.kind == LaunchKind::Gather || c.kind == LaunchKind::Column
                        ? groups_[q].domain.numel() == c.domain.numel()
                        : (c.kind == LaunchKind::Row || c.kind == LaunchKind::Loss) &&
                              (same_rows(groups_[q].domain, c.domain) || row_stat(groups_[q].domain, c.domain));
        if (fits && groups_[q].nodes.size() <= groups_[chosen].nodes.size() + 64) merge(chosen, q);
      }
    } else {
      chosen = new_group(id, role);
      if (role == Role::Attn) absorb_operand_permutes(chosen, n);
      if (role == Role::Matmul && p_.view[n.inputs[0]] && g_.node(n.inputs[0]).op == Op::Permute)
        chosen = weight_gradient(chosen, id);
    }
    if (role == Role::ColOp && groups_[chosen].kind == LaunchKind::Column) {
      last_column_ = chosen;
      if (groups_[chosen].nodes.size() == 1 && n.op == Op::SumTo && n.shape.rank == 1)
        col_sum_of_[resolve(n.inputs[0])] = chosen;
    }
    if (role == Role::RowOp || role == Role::LossOp) row_reader_[resolve(n.inputs[0])] = chosen;
    for (NodeId raw : n.inputs) {
      int q = group_of_[resolve(raw)];
      if (q >= 0 && q != chosen) groups_[q].sealed = true;
    }
  }

  NodeId product_of(const Group& grp) const {
    for (NodeId m : grp.nodes)
      if (g_.node(m).op == Op::Matmul) return m;
    SX_ASSERT(false, "a GEMM launch without a product");
    return kNoNode;
  }

  // A weight gradient a^T b: an earlier one with the same a and shapes, not
  // yet read, takes it as one more product of one batched call; a bias
  // gradient already summed from b becomes its BGRADB epilogue.
  int weight_gradient(int gid, NodeId id) {
    const Node& n = g_.node(id);
    NodeId a = resolve(n.inputs[0]), b = resolve(n.inputs[1]);
    int bias = col_sum_of_[b];
    if (bias >= 0 && groups_[bias].nodes.size() == 1 && !groups_[bias].sealed &&
        g_.node(groups_[bias].nodes[0]).shape.back() == n.shape.back()) {
      merge(gid, bias);
      groups_[gid].gemm_stage = 3;
    }
    gemm_by_b_[b] = gid;
    int sib = tn_by_a_[a];
    if (sib >= 0 && !groups_[sib].sealed && g_.node(product_of(groups_[sib])).shape == n.shape) {
      merge(sib, gid);
      ++groups_[sib].siblings;
      return sib;
    }
    tn_by_a_[a] = gid;
    return gid;
  }

  // Attention reads q, k and v in the layout before their permute (and
  // bf16 rounding): a producer group made of only those is folded in.
  void absorb_operand_permutes(int gid, const Node& n) {
    for (NodeId raw : n.inputs) {
      int q = group_of_[resolve(raw)];
      if (q < 0 || q == gid || groups_[q].sealed || groups_[q].kind != LaunchKind::Map) continue;
      bool layout_only = true;
      for (NodeId m : groups_[q].nodes)
        layout_only = layout_only && (g_.node(m).op == Op::Permute || g_.node(m).op == Op::RoundBf16);
      if (layout_only) merge(gid, q);
    }
  }

  Lowering launches() {
    // A member read by another launch, or an output of the step, is stored.
    std::vector<bool> stored(g_.size(), false);
    for (NodeId id : p_.schedule) {
      int gid = group_of_[id];
      for (NodeId raw : g_.node(id).inputs) {
        NodeId in = resolve(raw);
        if (group_of_[in] >= 0 && group_of_[in] != gid) stored[in] = true;
      }
    }
    for (NodeId o : p_.outputs) stored[resolve(o)] = true;
    std::vector<std::pair<int32_t, int>> order;  // a group runs where its last node is scheduled
    for (size_t gid = 0; gid < groups_.size(); ++gid) {
      Group& grp = groups_[gid];
      if (grp.nodes.empty()) continue;
      std::sort(grp.nodes.begin(), grp.nodes.end(),
                [&](NodeId a, NodeId b) { return p_.position[a] < p_.position[b]; });
      order.push_back({p_.position[grp.nodes.back()], static_cast<int>(gid)});
    }
    std::sort(order.begin(), order.end());
    Lowering out;
    for (NodeId id : p_.schedule) out.nodes += op_kind(g_.node(id).op) != OpKind::Leaf;
    for (const auto& [pos, gid] : order) {
      const Group& grp = groups_[gid];
      Launch l;
      l.kind = grp.kind;
      l.nodes = grp.nodes;
      l.domain = grp.kind == LaunchKind::Gemm ? g_.node(grp.nodes.back()).shape : grp.domain;
      std::vector<bool> seen_input;
      for (NodeId id : grp.nodes) {
        if (stored[id] || id == grp.nodes.back()) l.outputs.push_back(id);
        if (g_.node(id).op == Op::RoundBf16) l.bf16 = true;
        for (NodeId raw : g_.node(id).inputs) {
          NodeId in = resolve(raw);
          if (group_of_[in] == gid || inline_[in]) continue;
          if (std::find(l.inputs.begin(), l.inputs.end(), in) == l.inputs.end()) l.inputs.push_back(in);
        }
      }
      if (l.kind == LaunchKind::Gemm) describe_gemm(g_, p_, l, grp.siblings, precision_);
      set_grid(g_, l);
      l.structure = structure_hash(g_, p_, l);
      std::string op = main_op(g_, l);
      std::replace(op.begin(), op.end(), '-', '_');
      l.name = l.kind == LaunchKind::Gemm ? gemm_name(l.gemm)
                                          : fmt::format("{}_{}_{:08x}", launch_kind_name(l.kind), op,
                                                        static_cast<uint32_t>(l.structure ^ (l.structure >> 32)));
      out.launches.push_back(std::move(l));
    }
    return out;
  }

  const Graph& g_;
  const plan::Plan& p_;
  Precision precision_;
  std::vector<int> group_of_;
  std::vector<bool> skip_;
  std::vector<bool> inline_;
  std::vector<int> row_reader_;
  std::vector<int> gemm_by_b_;   // per node: the weight-gradient GEMM (a^T b) that reads it as b
  std::vector<int> col_sum_of_;  // per node: a column kernel summing only it to a vector
  std::vector<int> tn_by_a_;     // per node: the weight-gradient GEMM that reads it as a
  int last_column_ = -1;         // per node: the row kernel that last read it as its rows
  std::vector<bool> is_output_;
  std::vector<Group> groups_;
};

}  // namespace

Lowering lower(const Graph& g, const plan::Plan& p, Precision precision, const OptimizerInfo& optimizer) {
  Lowering l = Lowerer(g, p, precision).run();
  add_optimizer_launches(l, optimizer);
  return l;
}

}  // namespace sx::cuda
