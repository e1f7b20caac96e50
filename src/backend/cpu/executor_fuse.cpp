// Which consecutive steps the executor runs as one (CpuExecutor::fuse_pairs).
#include <algorithm>
#include <cmath>

#include "backend/cpu/executor.h"

namespace sx::cpu {

namespace {

// A constant f32 scalar (a full of one element): its value as run_leaf fills it.
bool scalar_f32(const Node& n) {
  return n.op == Op::Full && n.dtype == DType::F32 && n.shape.numel() == 1 &&
         std::isfinite(static_cast<float>(n.attrs.value));
}

// Whether two row lengths are positive and one is a multiple of the other.
bool divide_one_another(int64_t a, int64_t b) { return a > 0 && b > 0 && std::max(a, b) % std::min(a, b) == 0; }

}  // namespace

bool CpuExecutor::f32_binary(Op op) { return op == Op::Add || op == Op::Sub || op == Op::Mul || op == Op::Div; }

NodeId CpuExecutor::viewed(NodeId id) const {
  while (plan_.view[id] && g_.node(id).inputs.size() == 1) id = g_.node(id).inputs[0];
  return id;
}

int64_t CpuExecutor::bytes(NodeId id) const { return g_.node(id).shape.numel() * 4; }

bool CpuExecutor::apart(NodeId a, NodeId b) const {
  int64_t o = plan_.offset[a], xo = plan_.offset[b];
  return o < 0 || xo < 0 || xo + bytes(b) <= o || o + bytes(a) <= xo;
}

bool CpuExecutor::untouched(NodeId x, size_t from, size_t last) const {
  // A step may write a node planned up to 12 steps from it (the partner of a
  // fused pair, a product's epilogue, a sum-to made in a later product, a
  // region's outputs): the steps that far past `last` are looked at too.
  constexpr size_t kReach = 12;
  for (size_t i = from; i < std::min(last + kReach + 1, steps_.size()); ++i)
    if (!apart(x, steps_[i].id)) return false;
  return true;
}

bool CpuExecutor::in_place(NodeId out, NodeId x) const {
  return plan_.offset[out] >= 0 && plan_.offset[out] == plan_.offset[x] && bytes(out) == bytes(x);
}

CpuExecutor::Schedule CpuExecutor::schedule_index() const {
  Schedule s{std::vector<size_t>(g_.size(), steps_.size()), std::vector<std::vector<NodeId>>(g_.size()),
             std::vector<bool>(g_.size(), false)};
  for (size_t i = 0; i < steps_.size(); ++i) s.step_of[steps_[i].id] = i;
  for (NodeId id : plan_.schedule)
    for (NodeId in : g_.node(id).inputs)
      if (std::find(s.users[in].begin(), s.users[in].end(), id) == s.users[in].end()) s.users[in].push_back(id);
  for (NodeId o : plan_.outputs) s.output[o] = true;
  return s;
}

bool CpuExecutor::same_or_apart(NodeId a, NodeId b) const {
  return (plan_.offset[a] == plan_.offset[b] && bytes(a) == bytes(b)) || apart(a, b);
}

// Pairs of steps fused into one pass, with the same arithmetic element by
// element: a step whose output only the very next step reads (nothing runs
// in between, so every buffer live at the pair is live for both).
// - gelu-grad then mul (GELU's backward, dy * gelu'(x)): gelu_grad_f(x) * dy.
// - a float add/sub/mul/div then another (the norm and softmax backwards):
//   a row segment of the first into per-thread scratch, then the second.
//   The first step's buffer is never written. Not when the second's output
//   buffer partly overlaps an input of the first: it starts after their
//   last use, so the plan may have put it over part of their dead bytes.
//   And when the step after the pair multiplies the pair's output, which
//   nothing else reads, by a constant scalar in place (the softmax
//   backward's ds * scale), that mul too (BinaryScale): each segment of
//   the second step's output times the scalar as it is written.
// - an f32 matmul then its mul by a constant scalar (attention's scores
//   recomputed for the backward, q k^T * scale): the scalar as the product's
//   alpha, which multiplies each element once its sum is complete, as the
//   mul would (x * s == s * x). Only where the plan put the mul in place
//   over the product, so that the product writes where the mul would.
// - a where then a softmax over the last axis of its output (the causal
//   mask, then softmax): each task selects its rows into the softmax's
//   output and runs the softmax over them in place, while they are in cache.
//   Only in place, as the plan puts them when the masked scores die there.
// - an f32 matmul then the add of a row of its last dimension's length,
//   broadcast over its rows (a linear's bias): the row added to each tile
//   of C while it is in registers, after the product's last k block, as the
//   add would (the product's elements are complete; x + b == b + x). Only in
//   place, as for the scalar.
// - a float mul of two operands of its shape, then a sum or mean over the
//   last axis of its output (the softmax and norm backwards): each row's
//   products added as they are made, in the reduction's lane order. Not
//   when the reduction's output overlaps an operand (it may start over
//   their dead bytes).
// Returns the scratch floats per thread the pairs need.
int64_t CpuExecutor::fuse_pairs() {
  std::vector<int> uses(g_.size(), 0);
  for (NodeId id : plan_.schedule)
    for (NodeId in : g_.node(id).inputs) ++uses[in];
  for (NodeId o : plan_.outputs) uses[o] += 2;  // read after the step
  int64_t scratch = 0;
  for (size_t i = 0; i + 1 < steps_.size(); ++i) {
    // A product's next step is found past params (a linear's bias is traced
    // between its product and the add): they compute nothing.
    size_t next = i + 1;
    if (g_.node(steps_[i].id).op == Op::Matmul)
      while (next + 1 < steps_.size() && g_.node(steps_[next].id).op == Op::Param) ++next;
    Step &s = steps_[i], &t = steps_[next];
    if (!s.compute || !t.compute || s.fuse != Fuse::None || t.fuse != Fuse::None) continue;
    const Node &u = g_.node(s.id), &b = g_.node(t.id);
    if (uses[s.id] != 1 || u.dtype != DType::F32 || b.dtype != DType::F32) continue;
    int64_t bo = plan_.offset[t.id], len = bytes(t.id);
    bool in_place = bo >= 0 && bo == plan_.offset[s.id] && len == bytes(s.id);
    auto fuse_with_next = [&](Fuse kind) {
      s.fuse = kind;
      t.fuse = Fuse::IntoPrevious;
      t.compute = false;
    };

    if (u.op == Op::Where && b.op == Op::Softmax) {
      int64_t n = b.shape.rank ? b.shape.back() : 0, inner = s.prep.it.inner();
      bool rows = b.shape.rank > 0 && b.attrs.axis == b.shape.rank - 1 && divide_one_another(n, inner);
      if (in_place && rows && u.shape == b.shape && g_.node(u.inputs[1]).dtype == DType::F32)
        fuse_with_next(Fuse::WhereSoftmax);
      continue;
    }

    if (u.op == Op::Mul && (b.op == Op::Sum || b.op == Op::Mean)) {
      bool rows = u.shape.rank > 0 && b.attrs.axis == u.shape.rank - 1 && b.inputs[0] == s.id;
      for (NodeId x : u.inputs) {
        const Node& xn = g_.node(x);
        rows = rows && xn.dtype == DType::F32 && xn.shape == u.shape && bo >= 0 && same_or_apart(t.id, x);
      }
      if (rows) fuse_with_next(Fuse::MulReduce);
      continue;
    }

    if (b.inputs.size() != 2) continue;
    int slot = b.inputs[0] == s.id ? 0 : 1;
    NodeId d = b.inputs[1 - slot];
    if (b.inputs[slot] != s.id || d == s.id) continue;
    const Node& dn = g_.node(d);

    if (u.op == Op::Matmul && b.op == Op::Add) {
      // The other operand a row of n (a linear's bias), broadcast over the product's rows.
      int64_t n = u.shape.rank ? u.shape.back() : 0;
      bool row = dn.dtype == DType::F32 && dn.shape.rank >= 1 && dn.shape.back() == n && dn.shape.numel() == n;
      if (in_place && row && u.shape == b.shape && s.prep.mm.k > 0 && s.prep.mm.alpha == 1.0f) {
        s.fuse_slot = slot;
        s.fuse_next = static_cast<int>(next - i);
        fuse_with_next(Fuse::MatmulBias);
      }
      continue;
    }

    if (u.op == Op::Matmul && b.op == Op::Mul) {
      if (in_place && scalar_f32(dn) && u.shape == b.shape && s.prep.mm.k > 0) {
        s.prep.mm.alpha = static_cast<float>(dn.attrs.value);
        fuse_with_next(Fuse::MatmulScale);
      }
      continue;
    }

    bool gelu = u.op == Op::GeluGrad && b.op == Op::Mul;
    bool binary = f32_binary(u.op) && f32_binary(b.op);
    if (!gelu && !binary) continue;
    bool ok = dn.dtype == DType::F32 && u.shape == b.shape && dn.shape == b.shape && bo >= 0;
    for (NodeId x : u.inputs) {
      const Node& xn = g_.node(x);
      ok = ok && xn.dtype == DType::F32 && (gelu ? xn.shape == b.shape : true) && same_or_apart(t.id, x);
    }
    if (binary) {
      int64_t n1 = s.prep.it.inner(), n2 = t.prep.it.inner();
      ok = ok && divide_one_another(n1, n2) && std::min(n1, n2) >= 16;
    }
    if (!ok) continue;
    fuse_with_next(gelu ? Fuse::GeluGradMul : Fuse::Binary);
    s.fuse_slot = slot;
    if (!binary) continue;
    scratch = std::max(scratch, kFuseSegment);
    // The scalar's full is scheduled just before its mul: stepped over (it
    // fills its own buffer; the fused pass takes the value from the node).
    size_t third = next + 1;
    while (third + 1 < steps_.size() && g_.node(steps_[third].id).op == Op::Full) ++third;
    if (third < steps_.size() && uses[t.id] == 1) {
      Step& w = steps_[third];
      const Node& wn = g_.node(w.id);
      // A mul of the pair's output (once) and of the other operand x.
      bool mul_of_t = wn.op == Op::Mul && (wn.inputs[0] == t.id) != (wn.inputs[1] == t.id);
      NodeId x = mul_of_t ? wn.inputs[wn.inputs[0] == t.id ? 1 : 0] : t.id;
      if (mul_of_t && w.compute && w.fuse == Fuse::None && wn.dtype == DType::F32 && wn.shape == b.shape &&
          plan_.offset[w.id] == bo && bytes(w.id) == len && scalar_f32(g_.node(x))) {
        s.fuse = Fuse::BinaryScale;
        s.fuse_scale = static_cast<float>(g_.node(x).attrs.value);
        w.fuse = Fuse::IntoPrevious;
        w.compute = false;
      }
    }
  }
  for (const Step& s : steps_) ++fusions_[static_cast<int>(s.fuse)];
  return scratch;
}

}  // namespace sx::cpu

namespace sx::cpu {

// An elementwise step that reads a single f32 product, fused into the
// product's tiles (gemm.h's Gemm::then): each tile of C, once its sum (and
// bias) is final and while it is in L1, gives that step's elements by the
// step's own function.
// - a gelu of a linear's output (a matmul + bias pair): the MLP's forward.
// - the gelu-grad + mul pair whose mul reads the product (dh * gelu'(x)):
//   the MLP's backward, scheduled a few steps later (after the weight's
//   gradient, which reads the same gy).
// - an add of the product and another operand of its shape (the residual
//   stream, a gradient's two parts summed), the operands in the add's order.
// A bf16 product (batched ones too) makes the round of its output that
// `:precision bf16` puts after it (and its bias or scale), in place
// (Gemm::round_output); then, or without a round, a single product one of
// those steps, over each block after the round.
// The step's output is then written before the steps scheduled between
// them, so it must not meet what they read or write; nor the product's
// operands (other tiles still read them); and be C or x itself (read, then
// written, at one index) or apart from them.
void CpuExecutor::fuse_into_products() {
  constexpr size_t kWindow = 8;  // steps looked at after the product
  for (size_t i = 0; i < steps_.size(); ++i) {
    Step& s = steps_[i];
    const Node& mm = g_.node(s.id);
    bool bf16 = s.prep.bf16;
    // (k = 0: gemm writes +0 and the bias and returns, before any step in its tiles.)
    if (!s.compute || mm.op != Op::Matmul || mm.dtype != DType::F32 || s.prep.mm.k <= 0 ||
        (!bf16 && s.prep.mm.batches != 1) ||
        (s.fuse != Fuse::None && s.fuse != Fuse::MatmulBias && !(bf16 && s.fuse == Fuse::MatmulScale)) || s.region >= 0)
      continue;
    // C: the node holding the product's final values (the bias add's or the
    // scale's, when fused; the round's, once it is made in the product).
    size_t from = s.fuse != Fuse::None ? i + s.fuse_next + 1 : i + 1;
    NodeId c = s.fuse != Fuse::None ? steps_[i + s.fuse_next].id : s.id;
    NodeId fused_operand = s.fuse != Fuse::None ? g_.node(c).inputs[1 - s.fuse_slot] : kNoNode;  // the bias
    bool round = bf16;            // the next step to find is the round
    std::vector<NodeId> between;  // the compute steps passed over
    for (size_t at = from; at < std::min(steps_.size(), from + kWindow); ++at) {
      Step& t = steps_[at];
      const Node& tn = g_.node(t.id);
      NodeId out = kNoNode, x = kNoNode;
      if (!t.compute) {
        // a param or a view
      } else if (round && tn.op == Op::RoundBf16) {
        if (t.fuse == Fuse::None && tn.inputs[0] == c && in_place(t.id, c)) out = t.id;
      } else if (s.prep.mm.batches != 1) {
        // a batched product makes no elementwise step
      } else if (tn.op == Op::Gelu && t.fuse == Fuse::None && tn.inputs[0] == c) {
        out = t.id;
      } else if (tn.op == Op::Add && t.fuse == Fuse::None && tn.inputs.size() == 2 &&
                 (tn.inputs[0] == c) != (tn.inputs[1] == c)) {
        s.then_slot = tn.inputs[0] == c ? 0 : 1;
        out = t.id, x = tn.inputs[1 - s.then_slot];
      } else if (t.fuse == Fuse::GeluGradMul && s.fuse == Fuse::None && at + 1 < steps_.size()) {
        const Node& mul = g_.node(steps_[at + 1].id);
        if (mul.inputs[1 - t.fuse_slot] == c) out = steps_[at + 1].id, x = tn.inputs[0];
      }
      if (out == kNoNode) {
        if (t.compute) between.push_back(t.id);
        continue;
      }
      const Node& on = g_.node(out);
      bool ok = t.region < 0 && on.dtype == DType::F32 && on.shape == g_.node(c).shape && same_or_apart(out, c);
      if (x != kNoNode) {
        // x is read with the product's tiles: it must be made before the product.
        ok = ok && g_.node(x).dtype == DType::F32 && g_.node(x).shape == on.shape && same_or_apart(out, x) &&
             plan_.position[viewed(x)] < plan_.position[s.id];
      }
      for (NodeId operand : mm.inputs) ok = ok && apart(out, operand);
      if (fused_operand != kNoNode) ok = ok && apart(out, fused_operand);
      for (NodeId b : between) {
        ok = ok && apart(out, b);
        for (NodeId in : g_.node(b).inputs) ok = ok && apart(out, in);
      }
      if (!ok) break;
      t.compute = false;
      bool rounds = tn.op == Op::RoundBf16;
      ++fusions_[static_cast<int>(rounds ? Fuse::MatmulRound : Fuse::MatmulThen)];
      if (rounds) {
        s.round_step = static_cast<int>(at - i);
        c = out, round = false;
        if (s.prep.mm.batches != 1) break;
        continue;
      }
      s.then_step = static_cast<int>(out == t.id ? at - i : at + 1 - i);
      if (out != t.id) steps_[at + 1].compute = false;
      break;
    }
  }
}

// A sum-to of a [..., n] tensor down to [n] (a linear's bias gradient, a
// sum over gy's rows) whose tensor is, reshaped to [k, n], op(B) of a later
// single product (the weight gradient x^T gy, f32 or bf16): made as the product packs
// op(B), in the sum-to's order (gemm.h's Gemm::colsum), not in a pass of its
// own. Its output is then written later than planned: nothing scheduled
// between them may read it (its bytes are its own from the sum-to on).
void CpuExecutor::fuse_column_sums() {
  constexpr size_t kWindow = 12;  // steps looked at after the sum-to
  for (size_t i = 0; i < steps_.size(); ++i) {
    Step& s = steps_[i];
    const Node& sn = g_.node(s.id);
    if (!s.compute || sn.op != Op::SumTo || s.fuse != Fuse::None || sn.dtype != DType::F32 || sn.shape.rank != 1)
      continue;
    NodeId x = sn.inputs[0];
    const Node& xn = g_.node(x);
    if (xn.dtype != DType::F32 || xn.shape.rank < 2 || xn.shape.back() != sn.shape[0]) continue;
    bool read = false;  // by a step before the product
    for (size_t at = i + 1; !read && at < std::min(steps_.size(), i + 1 + kWindow); ++at) {
      Step& t = steps_[at];
      const Node& tn = g_.node(t.id);
      if (t.compute && tn.op == Op::Matmul && tn.dtype == DType::F32 && t.prep.mm.batches == 1 && !t.prep.trans[1] &&
          t.colsum_step == 0 && t.region < 0 &&
          (tn.inputs[1] == x || (plan_.view[tn.inputs[1]] && g_.node(tn.inputs[1]).op == Op::Reshape &&
                                 g_.node(tn.inputs[1]).inputs[0] == x)) &&
          t.prep.mm.k * t.prep.mm.n == xn.shape.numel()) {
        t.colsum_step = -static_cast<int>(at - i);
        s.compute = false;
        ++fusions_[static_cast<int>(Fuse::MatmulColumnSum)];
        break;
      }
      for (NodeId in : tn.inputs) read = read || in == s.id;
    }
  }
}

}  // namespace sx::cpu
