// A generated launch as a kernel of the IR: each node of the launch in
// schedule order becomes a few statements over registers; values made by
// other launches are loads, the launch's outputs stores. Index ops fold into
// the access of their load; constants (full, arange and functions of them)
// are recomputed where they are read, as the lowering decided.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "backend/cuda/kir.h"
#include "backend/cuda/lower_internal.h"
#include "backend/ref/elementwise.h"
#include "util/error.h"

namespace sx::cuda::kir {

const char* type_name(Type t) {
  switch (t) {
    case Type::f32:
      return "f32";
    case Type::bf16:
      return "bf16";
    case Type::i32:
      return "i32";
  }
  return "?";
}

namespace {

using Strides = std::array<int64_t, kMaxRank>;

Strides contiguous(const Shape& s) { return sx::strides(s); }

// Strides of `from` (whose elements sit at `fs`) read broadcast into `view`, aligned on the right.
Strides broadcast_into(const Shape& from, const Strides& fs, const Shape& view) {
  Strides out{};
  for (int d = 0; d < view.rank; ++d) {
    int fd = d - (view.rank - from.rank);
    if (fd < 0 || (from[fd] == 1 && view[d] != 1)) continue;
    out[d] = fs[fd];
  }
  return out;
}

RegType reg_type(DType d) { return is_float(d) ? RegType::f32 : RegType::i32; }

Type storage_type(const Node& n) {
  if (n.op == Op::RoundBf16 || n.dtype == DType::BF16) return Type::bf16;
  return is_float(n.dtype) ? Type::f32 : Type::i32;
}

class Builder {
 public:
  Builder(const Graph& g, const plan::Plan& p, const Launch& l) : g_(g), p_(p), l_(l) {
    member_.assign(g.size(), false);
    for (NodeId id : l.nodes) member_[id] = true;
    k_.kind = l.kind;
    k_.name = l.name;
    k_.grid = l.grid;
    k_.block = l.block;
    Shape domain = l.domain;
    if (l.kind == LaunchKind::Column) domain = first_reduction_input();
    if (l.kind == LaunchKind::Scatter) domain = shape_of_raw(g.node(first_of(Op::ScatterAdd)).inputs[0]);
    if (l.kind == LaunchKind::Attention) domain = g.node(first_of(Op::Attention)).shape;
    k_.spaces.push_back(domain);
    for (NodeId o : l.outputs) stored_.push_back(o);
  }

  Kernel run() {
    for (NodeId id : l_.nodes) node(id);
    return std::move(k_);
  }

 private:
  const Shape& domain() const { return k_.spaces[0]; }
  NodeId resolve(NodeId id) const { return detail::resolve_view(p_, g_, id); }
  const Shape& shape_of_raw(NodeId raw) const { return g_.node(raw).shape; }

  NodeId first_of(Op op) const {
    for (NodeId id : l_.nodes)
      if (g_.node(id).op == op) return id;
    SX_ASSERT(false, "kir::build: a launch without its main op");
    return kNoNode;
  }
  Shape first_reduction_input() const {
    for (NodeId id : l_.nodes) {
      const Node& n = g_.node(id);
      if (op_kind(n.op) == OpKind::Reduce || n.op == Op::SumTo) return shape_of_raw(n.inputs[0]);
    }
    return l_.domain;
  }

  int space(const Shape& s) {
    for (size_t i = 0; i < k_.spaces.size(); ++i)
      if (k_.spaces[i] == s) return static_cast<int>(i);
    k_.spaces.push_back(s);
    return static_cast<int>(k_.spaces.size()) - 1;
  }
  // The domain with the last axis folded (a row kernel's statistics).
  int rows_space() {
    Shape s = domain();
    if (s.rank > 0) s[s.rank - 1] = 1;
    return space(s);
  }
  int scalar_space(int like) {
    Shape s = k_.spaces[like];
    for (int d = 0; d < s.rank; ++d) s[d] = 1;
    return space(s);
  }
  // Where a node's values live: the domain, or (row kernels) the row statistics.
  int space_for(const Node& n) { return sp_of(n.shape); }
  int sp_of(const Shape& s) {
    if (l_.kind == LaunchKind::Attention) return space(s);
    if (s.numel() == domain().numel()) return 0;
    if (l_.kind == LaunchKind::Row || l_.kind == LaunchKind::Loss) {
      int r = rows_space();
      if (s.numel() == k_.spaces[r].numel()) return r;
    }
    SX_ASSERT(false, "kir::build: a value whose size is neither the domain's nor its rows'");
    return 0;
  }

  Reg emit(Stmt s, RegType type) {
    if (s.node != kNoNode) s.dtype = g_.node(s.node).dtype, s.span = g_.node(s.node).span;
    if (s.kind != StmtKind::Store && s.kind != StmtKind::ScatterAdd) {
      s.out = static_cast<Reg>(k_.regs.size());
      k_.regs.push_back({type, s.space});
    }
    k_.body.push_back(std::move(s));
    return k_.body.back().out;
  }

  int buffer(Source src, NodeId node, const std::string& path, Type type, const Shape& shape, bool written) {
    for (size_t i = 0; i < k_.buffers.size(); ++i) {
      Buffer& b = k_.buffers[i];
      if (b.source == src && b.node == node && b.path == path) {
        (written ? b.written : b.read) = true;
        return static_cast<int>(i);
      }
    }
    Buffer b;
    b.name = fmt::format("b{}", k_.buffers.size());
    b.source = src, b.node = node, b.path = path, b.type = type, b.shape = shape;
    (written ? b.written : b.read) = true;
    k_.buffers.push_back(std::move(b));
    return static_cast<int>(k_.buffers.size()) - 1;
  }

  // The buffer an outside value is read from, and the strides of `raw`'s
  // elements in it (a view of it: an alias, or a folded transpose).
  int input_buffer(NodeId raw, Strides* st) {
    const Node& r = g_.node(raw);
    if (p_.view[raw]) {
      if (r.op == Op::Permute && plan::is_transpose(r)) {
        Strides in;
        int b = input_buffer(r.inputs[0], &in);
        for (int d = 0; d < r.shape.rank; ++d) (*st)[d] = in[r.attrs.perm[d]];
        return b;
      }
      Strides ignored;
      int b = input_buffer(r.inputs[0], &ignored);
      *st = contiguous(r.shape);
      return b;
    }
    *st = contiguous(r.shape);
    // A parameter's bf16 round is its copy, which the optimizer keeps.
    if (r.op == Op::RoundBf16 && g_.node(resolve(r.inputs[0])).op == Op::Param) {
      const Node& param = g_.node(resolve(r.inputs[0]));
      return buffer(Source::ParamCopy, kNoNode, param.path, Type::bf16, param.shape, false);
    }
    return buffer(Source::Value, raw, "", storage_type(r), r.shape, false);
  }

  Reg load(NodeId raw, const Shape& view, const Strides& st, int64_t offset, int sp) {
    Stmt s;
    s.kind = StmtKind::Load;
    s.space = sp;
    Strides ignored;
    s.access.buffer = input_buffer(raw, &ignored);
    s.access.view = view;
    s.access.stride = st;
    s.access.offset = offset;
    s.node = raw;
    return emit(std::move(s), reg_type(g_.node(raw).dtype));
  }

  // A constant read where it is used: full, arange and elementwise functions of them.
  Reg inline_value(NodeId raw, const Shape& view, int sp) {
    NodeId id = resolve(raw);
    const Node& n = g_.node(id);
    Stmt s;
    s.node = id;
    if (n.op == Op::Full) {
      s.kind = StmtKind::Const, s.value = n.attrs.value, s.space = scalar_space(sp);
      return emit(std::move(s), reg_type(n.dtype));
    }
    if (n.op == Op::Arange || (n.op == Op::Reshape && g_.node(resolve(n.inputs[0])).op == Op::Arange)) {
      s.kind = StmtKind::Iota, s.space = sp;
      s.access.view = view;
      s.access.stride = broadcast_into(shape_of_raw(raw), contiguous(shape_of_raw(raw)), view);
      Reg r = emit(std::move(s), RegType::i32);
      return n.dtype == DType::I32 ? r : convert(r, reg_type(n.dtype), sp, id);
    }
    if (n.op == Op::Reshape && g_.node(resolve(n.inputs[0])).op == Op::Full) return inline_value(n.inputs[0], view, sp);
    SX_ASSERT(op_kind(n.op) == OpKind::Unary || op_kind(n.op) == OpKind::Binary || op_kind(n.op) == OpKind::Ternary,
              "kir::build: an inline constant of an unexpected op");
    std::vector<Reg> args;
    for (NodeId in : n.inputs) args.push_back(inline_value(in, view, sp));
    return elementwise(n, id, args);
  }

  Reg convert(Reg r, RegType to, int sp, NodeId id) {
    if (k_.regs[r].type == to) return r;
    Stmt s;
    s.kind = StmtKind::Unary, s.op = Op::Cast, s.space = sp, s.args = {r}, s.node = id;
    return emit(std::move(s), to);
  }

  // The lowering lists every value a launch reads from memory; any other
  // outside value is a constant it recomputes.
  bool is_inline(NodeId raw) const {
    NodeId id = resolve(raw);
    return !member_[id] && std::find(l_.inputs.begin(), l_.inputs.end(), id) == l_.inputs.end();
  }

  // Input `raw` of a node whose values are indexed by `view` in space `sp`, broadcast.
  Reg value(NodeId raw, const Shape& view, int sp) {
    NodeId id = resolve(raw);
    if (member_[id]) {
      auto it = reg_of_.find(id);
      SX_ASSERT(it != reg_of_.end(), "kir::build: a member read before it is computed");
      return it->second;
    }
    if (is_inline(raw)) return inline_value(raw, view, sp);
    Strides st;
    input_buffer(raw, &st);
    return load(raw, view, broadcast_into(shape_of_raw(raw), st, view), 0, sp);
  }

  int union_space(const std::vector<Reg>& args) {
    Shape s = k_.spaces[k_.regs[args[0]].space];
    for (Reg a : args) {
      const Shape& t = k_.spaces[k_.regs[a].space];
      SX_ASSERT(t.rank == s.rank, "kir::build: operands of different ranks");
      for (int d = 0; d < s.rank; ++d) s[d] = std::max(s[d], t[d]);
    }
    return space(s);
  }

  Reg elementwise(const Node& n, NodeId id, const std::vector<Reg>& args) {
    Stmt s;
    s.node = id;
    s.args = args;
    s.space = union_space(args);
    s.op = n.op;
    RegType t = reg_type(n.dtype);
    switch (op_kind(n.op)) {
      case OpKind::Unary:
        s.kind = StmtKind::Unary;
        break;
      case OpKind::Binary:
        s.kind = StmtKind::Binary;
        if (ref::is_comparison(n.op)) t = RegType::i32;
        break;
      default:
        s.kind = StmtKind::Select;
        break;
    }
    Reg r = emit(std::move(s), t);
    return bf16_round(n, id, r);
  }

  // A node of dtype bf16 holds bf16 values after each op (as the reference computes it).
  Reg bf16_round(const Node& n, NodeId id, Reg r) {
    if (n.dtype != DType::BF16 || n.op == Op::RoundBf16 || n.op == Op::Cast) {
      if (n.op == Op::Cast && n.dtype == DType::BF16) {
        Stmt s;
        s.kind = StmtKind::Unary, s.op = Op::RoundBf16, s.args = {r}, s.space = k_.regs[r].space, s.node = id;
        return emit(std::move(s), RegType::f32);
      }
      return r;
    }
    Stmt s;
    s.kind = StmtKind::Unary, s.op = Op::RoundBf16, s.args = {r}, s.space = k_.regs[r].space, s.node = id;
    return emit(std::move(s), RegType::f32);
  }

  void define(NodeId id, Reg r) {
    reg_of_[id] = r;
    if (std::find(stored_.begin(), stored_.end(), id) != stored_.end()) store(id, r);
  }

  void store(NodeId id, Reg r) {
    const Node& n = g_.node(id);
    Stmt s;
    s.kind = StmtKind::Store;
    s.args = {r};
    s.space = k_.regs[r].space;
    s.node = id;
    s.access.buffer = buffer(Source::Value, id, "", storage_type(n), n.shape, true);
    auto perm = perm_of_.find(id);
    if (perm == perm_of_.end()) {
      s.access.view = n.shape;
      s.access.stride = contiguous(n.shape);
    } else {  // a permute of a register: the store walks the output in the input's order
      const Shape& in = k_.spaces[s.space];
      const Shape& permuted = perm->second.shape;  // the node's own shape, or its reshape's (same bytes)
      Strides out = contiguous(permuted);
      s.access.view = in;
      for (int d = 0; d < permuted.rank; ++d) s.access.stride[perm->second.perm[d]] = out[d];
    }
    emit(std::move(s), RegType::f32);
  }

  void node(NodeId id);
  void index_op(NodeId id);
  void reduce(NodeId id);
  void fused(NodeId id);

  const Graph& g_;
  const plan::Plan& p_;
  const Launch& l_;
  Kernel k_;
  std::vector<bool> member_;
  std::vector<NodeId> stored_;
  std::vector<NodeId> scattered_;  // outputs a ScatterAdd writes itself
  std::map<NodeId, Reg> reg_of_;
  struct Permuted {
    std::array<int8_t, kMaxRank> perm;
    Shape shape;  // the permute's output
  };
  std::map<NodeId, Permuted> perm_of_;  // a register stored permuted (a permute, a rounding of one)
};

#include "backend/cuda/kir_build_nodes.inc"

}  // namespace

Kernel build(const Graph& g, const plan::Plan& p, const Launch& l) {
  SX_ASSERT(!l.cublas() && l.kind != LaunchKind::Optimizer, "kir::build of a cublas or optimizer launch");
  return Builder(g, p, l).run();
}

}  // namespace sx::cuda::kir
