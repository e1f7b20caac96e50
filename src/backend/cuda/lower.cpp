// The grouping of a planned step into launches (lower.h). Nodes are placed
// in schedule order; each joins the launch of an input when that launch's
// kind can take it (a fusion rule, lower.h's FusionRule), else starts one.
// A launch runs where the last node it took before others read it sits,
// so every launch follows the launches whose values it reads.
#include "backend/cuda/lower.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "backend/cuda/lower_internal.h"
#include "util/error.h"

namespace sx::cuda {

using namespace detail;

namespace {

// One product of a GEMM launch and the last node of its epilogue.
struct Product {
  NodeId matmul = kNoNode, root = kNoNode;
  int stage = 0;  // 0 plain, 1 bias, 2 gelu or d gelu, 3 rounded out or bias gradient
};

struct Group {
  LaunchKind kind = LaunchKind::Map;
  Shape domain;
  bool sealed = false;  // a node outside reads a member: only a late elementwise node may join
  bool closed = false;  // its kind takes no more members (a column reduction, attention)
  NodeId root = kNoNode;
  int32_t run_at = -1;            // the schedule position it runs at
  uint32_t rules = 0;             // FusionRule bits
  std::vector<Product> products;  // Gemm: one per product of the grouped call
  std::vector<NodeId> nodes;
};

uint32_t bit(FusionRule r) { return 1u << static_cast<int>(r); }

class Lowerer {
 public:
  Lowerer(const Graph& g, const plan::Plan& p, Precision precision) : g_(g), p_(p), precision_(precision) {
    group_of_.assign(g.size(), -1);
    skip_.assign(g.size(), false);
    inline_.assign(g.size(), false);
    read_outside_.assign(g.size(), false);
    row_reader_.assign(g.size(), -1);
    gemm_by_b_.assign(g.size(), -1);
    col_sum_of_.assign(g.size(), -1);
    tn_by_a_.assign(g.size(), -1);
    nn_by_a_.assign(g.size(), -1);
    is_output_.assign(g.size(), false);
    for (NodeId o : p.outputs) is_output_[resolve(o)] = true;
    mark_skipped(g, p, is_output_, skip_, inline_);
  }

  Lowering run() {
    for (NodeId id : p_.schedule) place(id);
    return launches();
  }

 private:
  NodeId resolve(NodeId id) const { return resolve_view(p_, g_, id); }

  bool reads(const Group& grp, NodeId value) const {
    for (NodeId m : grp.nodes)
      for (NodeId raw : g_.node(m).inputs)
        if (resolve(raw) == value) return true;
    return false;
  }
  // Whether node n may join `grp` although others already read the group's
  // values: it reads only the group's members, values the group reads
  // anyway and leaves, so the group can still run where it runs.
  bool late(const Group& grp, const Node& n) const {
    for (NodeId raw : n.inputs) {
      NodeId in = resolve(raw);
      int q = group_of_[in];
      if (q >= 0 && &groups_[q] != &grp && !reads(grp, in)) return false;
    }
    return true;
  }

  // Whether node id can be computed where `grp` runs, although others read
  // `grp` already: every value it reads comes from a launch that runs before
  // `grp`, or from an unsealed map of grp's domain (its prologue, which joins
  // with it) whose own inputs do.
  bool ready_before(const Group& grp, NodeId id, const Group* prologue = nullptr) const {
    for (NodeId raw : g_.node(id).inputs) {
      int q = group_of_[resolve(raw)];
      if (q < 0 || groups_[q].run_at < grp.run_at || &groups_[q] == prologue) continue;
      const Group& c = groups_[q];
      if (prologue || &c == &grp || c.sealed || c.kind != LaunchKind::Map || c.domain.numel() != grp.domain.numel() ||
          c.nodes.size() > grp.nodes.size() + 64)
        return false;
      for (NodeId m : c.nodes)
        if (!ready_before(grp, m, &c)) return false;
    }
    return true;
  }

  Product* product_at(Group& grp, NodeId root) {
    for (Product& x : grp.products)
      if (x.root == root) return &x;
    return nullptr;
  }
  const Product* product_at(const Group& grp, NodeId root) const {
    return const_cast<Lowerer*>(this)->product_at(const_cast<Group&>(grp), root);
  }

  bool absorbs(const Group& grp, NodeId id, Role role, NodeId via) const {
    const Node& n = g_.node(id);
    const Shape& vs = g_.node(via).shape;
    if (grp.closed && grp.kind != LaunchKind::Attention) {  // a column kernel still stores elementwise
                                                            // functions of its domain's values
      if (grp.kind != LaunchKind::Column || role != Role::Elem || n.shape.numel() != grp.domain.numel()) return false;
      for (NodeId raw : n.inputs) {
        NodeId in = resolve(raw);
        if (group_of_[in] >= 0 && &groups_[group_of_[in]] == &grp && g_.node(in).shape.numel() != n.shape.numel())
          return false;
      }
      return n.op == Op::RoundBf16 && late(grp, n);
    }
    // Late, only a value's bf16 rounding (a gradient's, read by a product) or a grouped product's epilogue.
    if (grp.sealed && !(late(grp, n) && (n.op == Op::RoundBf16 || grp.kind == LaunchKind::Gemm))) return false;
    switch (grp.kind) {
      case LaunchKind::Map:
        if (role == Role::Elem) return vs.numel() == grp.domain.numel() && n.shape.numel() == grp.domain.numel();
        if (grp.sealed) return false;
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
        if (grp.sealed) return false;
        if (role == Role::RowOp || role == Role::LossOp) return full_in && same_rows(row_domain(g_, id), grp.domain);
        return false;
      }
      case LaunchKind::Gemm: {
        const Product* x = product_at(grp, via);
        if (!x) return false;
        // cuBLASLt keeps only GELU's pre-activation: another epilogue needs the value it replaces unread.
        if (read_outside_[via] && n.op != Op::Gelu) return false;
        if (n.op == Op::Add && x->stage == 0) {
          NodeId other = resolve(n.inputs[0]) == via ? resolve(n.inputs[1]) : resolve(n.inputs[0]);
          const Shape& b = g_.node(other).shape;
          return b.rank == 1 && b[0] == n.shape.back() && n.shape == vs && group_of_[other] != group_of_[via];
        }
        if (n.op == Op::Gelu) return x->stage <= 1;
        if (n.op == Op::Mul && x->stage == 0 && grp.products.size() == 1) {  // d gelu: times gelu'(a saved pre)
          NodeId other = resolve(n.inputs[0]) == via ? resolve(n.inputs[1]) : resolve(n.inputs[0]);
          int q = group_of_[other];
          return g_.node(other).op == Op::GeluGrad && q >= 0 && groups_[q].nodes.size() == 1 && !groups_[q].sealed &&
                 n.shape == vs;
        }
        if (n.op == Op::RoundBf16) return x->stage <= 2;
        return false;
      }
      case LaunchKind::Attention:  // stores its output rounded and/or in the layout a permute asks
        return via == grp.root && (n.op == Op::RoundBf16 || (n.op == Op::Permute && !grp.closed));
      case LaunchKind::Gather:
        return role == Role::Elem && n.shape.numel() == grp.domain.numel();
      default:
        return false;
    }
  }

  FusionRule rule_for(const Group& grp, NodeId id, Role role) const {
    return join_rule(grp.kind, grp.sealed || grp.closed, g_.node(id).op, role);
  }

  void add_to(int gid, NodeId id, Role role, FusionRule rule) {
    Group& grp = groups_[gid];
    const Node& n = g_.node(id);
    grp.rules |= bit(rule);
    if (!grp.sealed) grp.run_at = p_.position[id];
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
      if (n.op == Op::SumTo) {  // beside its product, not after it
        for (Product& x : grp.products)
          if (resolve(g_.node(x.matmul).inputs[1]) == resolve(n.inputs[0])) x.stage = 3;
      } else {
        Product* x = nullptr;
        for (NodeId raw : n.inputs)
          if (!x) x = product_at(grp, resolve(raw));
        SX_ASSERT(x, "a GEMM epilogue node that reads no product");
        x->stage = n.op == Op::Add ? 1 : n.op == Op::RoundBf16 ? 3 : 2;
        x->root = id;
      }
    } else if (grp.kind == LaunchKind::Attention) {
      grp.closed = grp.closed || n.op == Op::Permute;
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
        grp.kind = LaunchKind::Gemm, grp.products = {{id, id, 0}};
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
    grp.nodes.push_back(id);
    grp.root = id;
    grp.run_at = p_.position[id];
    groups_.push_back(std::move(grp));
    int gid = static_cast<int>(groups_.size()) - 1;
    group_of_[id] = gid;
    return gid;
  }

  // Moves every node of `from` into `into`, by `rule`.
  void merge(int into, int from, FusionRule rule) {
    Group& a = groups_[into];
    Group& b = groups_[from];
    for (NodeId m : b.nodes) group_of_[m] = into, a.nodes.push_back(m);
    a.products.insert(a.products.end(), b.products.begin(), b.products.end());
    a.rules |= b.rules | bit(rule);
    a.run_at = std::max(a.run_at, b.run_at);
    b.nodes.clear(), b.products.clear();
    b.sealed = true;
  }

  void place(NodeId id) {
    Role role = role_of(g_, p_, id, skip_);
    if (role == Role::Skip) return;
    const Node& n = g_.node(id);
    int chosen = -1;
    FusionRule rule = FusionRule::ElementwiseChain;
    // A row kernel first joins another reader of the same rows (cross-entropy
    // forward and its gradient's softmax: one kernel, probabilities never stored).
    if (role == Role::RowOp || role == Role::LossOp) {
      NodeId x = resolve(n.inputs[0]);
      int r = row_reader_[x];
      if (r >= 0 && !groups_[r].sealed && same_rows(groups_[r].domain, row_domain(g_, id)))
        chosen = r, rule = FusionRule::SharedRows;
    }
    // A bias gradient is the column sums of a weight gradient's B operand: cuBLASLt's BGRADB epilogue.
    if (role == Role::ColOp && n.op == Op::SumTo && n.shape.rank == 1) {
      int q = gemm_by_b_[resolve(n.inputs[0])];
      if (q >= 0 && !groups_[q].sealed && groups_[q].products.size() == 1 && groups_[q].products[0].stage == 0 &&
          g_.node(groups_[q].products[0].matmul).shape.back() == n.shape[0])
        chosen = q, rule = FusionRule::GemmBiasGrad;
    }
    // Column reductions of one domain side by side are one kernel (a norm's
    // gain and bias gradients; q, k and v's bias gradients, each beside the
    // permute of its gradient, where the first runs).
    bool side_by_side = false;
    if (chosen < 0 && role == Role::ColOp && last_column_ >= 0) {
      const Group& c = groups_[last_column_];
      const Shape rows = row_domain(g_, id);
      bool unsealed_same = !c.sealed && c.domain == rows;  // its domain's shape: the reduction folds the same axes
      bool ready_same = c.sealed && c.domain.numel() == rows.numel() && ready_before(c, id);  // a view of it
      if (c.kind == LaunchKind::Column && (unsealed_same || ready_same))
        chosen = last_column_, rule = FusionRule::SideBySideColumns, side_by_side = true;
    }
    const int32_t side_by_side_at = side_by_side ? groups_[chosen].run_at : -1;
    if (chosen < 0 && (role != Role::Index || n.op == Op::Expand || n.op == Op::Permute)) {
      // Prefer a row kernel: elementwise work joins the reduction that shares its rows.
      for (NodeId raw : n.inputs) {
        NodeId in = resolve(raw);
        int q = group_of_[in];
        if (q >= 0 && (groups_[q].kind == LaunchKind::Row || groups_[q].kind == LaunchKind::Loss) &&
            absorbs(groups_[q], id, role, in)) {
          chosen = q, rule = rule_for(groups_[q], id, role);
          break;
        }
      }
    }
    if (chosen < 0 && (role != Role::Index || n.op == Op::Expand || n.op == Op::Permute))
      for (size_t i = 0; i < n.inputs.size() && chosen < 0; ++i) {
        NodeId in = resolve(n.inputs[i]);
        int q = group_of_[in];
        if (q >= 0 && absorbs(groups_[q], id, role, in)) chosen = q, rule = rule_for(groups_[q], id, role);
      }
    if (chosen >= 0) {
      add_to(chosen, id, role, rule);
      if (groups_[chosen].kind == LaunchKind::Gemm && n.op == Op::Mul)  // the d gelu epilogue takes gelu'
        for (NodeId raw : n.inputs)
          if (g_.node(resolve(raw)).op == Op::GeluGrad) merge(chosen, group_of_[resolve(raw)], rule);
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
        if (fits && groups_[q].nodes.size() <= groups_[chosen].nodes.size() + 64)
          merge(chosen, q, FusionRule::ProducerPrologue);
      }
      if (side_by_side && groups_[chosen].sealed) groups_[chosen].run_at = side_by_side_at;  // read already
    } else {
      chosen = new_group(id, role);
      if (role == Role::Attn) absorb_operand_permutes(chosen, n);
      if (role == Role::Matmul) chosen = sibling_product(chosen, id);
    }
    if (role == Role::ColOp && groups_[chosen].kind == LaunchKind::Column) {
      last_column_ = chosen;
      if (groups_[chosen].nodes.size() == 1 && n.op == Op::SumTo && n.shape.rank == 1)
        col_sum_of_[resolve(n.inputs[0])] = chosen;
    }
    if (role == Role::RowOp || role == Role::LossOp) row_reader_[resolve(n.inputs[0])] = chosen;
    for (NodeId raw : n.inputs) {
      NodeId in = resolve(raw);
      int q = group_of_[in];
      if (q >= 0 && q != chosen) groups_[q].sealed = true, read_outside_[in] = true;
    }
  }

  // Products of one a operand and one shape are one grouped call: weight
  // gradients a^T b (before anything reads the first, a bias gradient
  // already summed from b its BGRADB epilogue), and products of a weight
  // (q, k and v of one input), which may join later since they read only
  // what the first reads and leaves.
  int sibling_product(int gid, NodeId id) {
    const Node& n = g_.node(id);
    NodeId a = resolve(n.inputs[0]), b = resolve(n.inputs[1]);
    auto transposed = [&](NodeId raw) { return p_.view[raw] && g_.node(raw).op == Op::Permute; };
    auto same_call = [&](int sib) {
      const Node& first = g_.node(groups_[sib].products[0].matmul);
      return first.shape == n.shape && g_.node(first.inputs[1]).shape == g_.node(n.inputs[1]).shape &&
             transposed(first.inputs[0]) == transposed(n.inputs[0]) &&
             transposed(first.inputs[1]) == transposed(n.inputs[1]);
    };
    if (transposed(n.inputs[0])) {
      int bias = col_sum_of_[b];
      if (bias >= 0 && groups_[bias].nodes.size() == 1 && !groups_[bias].sealed &&
          g_.node(groups_[bias].nodes[0]).shape.back() == n.shape.back()) {
        merge(gid, bias, FusionRule::GemmBiasGrad);
        groups_[gid].products[0].stage = 3;
      }
      gemm_by_b_[b] = gid;
      int sib = tn_by_a_[a];
      if (sib >= 0 && !groups_[sib].sealed && same_call(sib)) {
        merge(sib, gid, FusionRule::SiblingProducts);
        return sib;
      }
      tn_by_a_[a] = gid;
      return gid;
    }
    int sib = nn_by_a_[a];
    bool weight = group_of_[b] < 0 && !inline_[b];  // a parameter, its bf16 copy or a feed
    if (weight && sib >= 0 && same_call(sib) && groups_[sib].kind == LaunchKind::Gemm &&
        (!groups_[sib].sealed || late(groups_[sib], n))) {
      int32_t at = groups_[sib].run_at;
      merge(sib, gid, FusionRule::SiblingProducts);
      if (groups_[sib].sealed) groups_[sib].run_at = at;  // read already: it runs where it did
      return sib;
    }
    if (weight) nn_by_a_[a] = gid;
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
      if (layout_only) merge(gid, q, FusionRule::AttentionLayout);
    }
  }

  Lowering launches();

  const Graph& g_;
  const plan::Plan& p_;
  Precision precision_;
  std::vector<int> group_of_;
  std::vector<bool> skip_;
  std::vector<bool> inline_;
  std::vector<bool> read_outside_;  // per node: read by a launch other than its own
  std::vector<int> row_reader_;     // per node: the row kernel that last read it as its rows
  std::vector<int> gemm_by_b_;      // per node: the weight-gradient GEMM (a^T b) that reads it as b
  std::vector<int> col_sum_of_;     // per node: a column kernel summing only it to a vector
  std::vector<int> tn_by_a_;        // per node: the weight-gradient GEMM that reads it as a
  std::vector<int> nn_by_a_;        // per node: the GEMM that reads it as a, times a weight
  int last_column_ = -1;            // the last column kernel started
  std::vector<bool> is_output_;
  std::vector<Group> groups_;
};

Lowering Lowerer::launches() {
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
  std::vector<std::pair<int32_t, int>> order;
  for (size_t gid = 0; gid < groups_.size(); ++gid) {
    Group& grp = groups_[gid];
    if (grp.nodes.empty()) continue;
    std::sort(grp.nodes.begin(), grp.nodes.end(), [&](NodeId a, NodeId b) { return p_.position[a] < p_.position[b]; });
    order.push_back({grp.run_at, static_cast<int>(gid)});
  }
  std::sort(order.begin(), order.end());
  Lowering out;
  for (NodeId id : p_.schedule) out.nodes += op_kind(g_.node(id).op) != OpKind::Leaf;
  for (const auto& [pos, gid] : order) {
    const Group& grp = groups_[gid];
    Launch l;
    l.kind = grp.kind;
    l.nodes = grp.nodes;
    l.rules = grp.rules;
    l.domain = grp.kind == LaunchKind::Gemm ? g_.node(grp.nodes.back()).shape : grp.domain;
    for (NodeId id : grp.nodes) {
      if (stored[id] || id == grp.nodes.back()) l.outputs.push_back(id);
      if (g_.node(id).op == Op::RoundBf16) l.bf16 = true;
      for (NodeId raw : g_.node(id).inputs) {
        NodeId in = resolve(raw);
        if (group_of_[in] == gid) continue;
        if (inline_[in]) {
          l.rules |= bit(FusionRule::InlineConstant);
          continue;
        }
        if (skip_[in] && g_.node(in).op == Op::RoundBf16) l.rules |= bit(FusionRule::ParamBf16Copy);
        if (std::find(l.inputs.begin(), l.inputs.end(), in) == l.inputs.end()) l.inputs.push_back(in);
      }
    }
    describe_launch(g_, p_, l, static_cast<int64_t>(grp.products.size()), precision_);
    out.launches.push_back(std::move(l));
  }
  return out;
}

}  // namespace

Lowering lower(const Graph& g, const plan::Plan& p, Precision precision, const OptimizerInfo& optimizer) {
  Lowering l = Lowerer(g, p, precision).run();
  add_optimizer_launches(l, optimizer);
  return l;
}

}  // namespace sx::cuda
