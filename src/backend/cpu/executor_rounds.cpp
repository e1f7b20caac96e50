// The round-bf16 steps of `:precision bf16` (graph/precision.h) that are
// not run, for the same bits: those over values already bf16, those whose
// value only bf16 products read, which round their operands as they pack
// them, and those made as attention and its backward write their outputs.
#include <algorithm>

#include "backend/cpu/executor.h"

namespace sx::cpu {

// A round-bf16 in place over values that are bf16 already changes no bit
// (round_bf16 of a bf16 value, an inf or a NaN is itself), so it is not
// run: `:precision bf16` rounds every product's operands, and a product's
// output, rounded as it is made, reaches the next product's operand
// through a reshape and the permute that moves attention's heads, where
// it was rounded again (at medium, 48 rounds of 2 MB a step).
void CpuExecutor::skip_idempotent_rounds() {
  for (Step& s : steps_) {
    const Node& n = g_.node(s.id);
    if (!s.compute || n.op != Op::RoundBf16) continue;
    NodeId x = n.inputs[0];
    if (!in_place(s.id, x) || !holds_bf16_values(g_, x)) continue;
    s.compute = false;
    ++skipped_rounds_;
  }
}

// A round-bf16 whose value (through views) only bf16 products read as
// operands changes none of their bits: a product's packing reads an operand
// as bf16_operand, and bf16_operand(round_bf16(x)) is bf16_operand(x) (a
// float rounded to nearest even twice is rounded once; an inf or a NaN
// rounds to itself, quieted alike). So it is not run where the products can
// read x instead: the round is in place over x (nothing else reads x's
// bytes after it), or x is a parameter (its bytes live and unwritten through
// the step), or x's bytes hold x until the round's last reader (x is read
// later, and no step writes them in between: the residual gradient's sums,
// rounded apart), whose bytes the round's value and views then are. Not where a
// product reads the operand otherwise: attention's backward by head (which
// decides from its operands' magnitudes how to skip the mask's zeros),
// attention's v (its product with P is f32). A sum-to made by a weight
// gradient as it packs op(B) (MatmulColumnSum, a bias gradient) reads the
// value too: it sums the values rounded (Gemm::colsum_rounded). At medium:
// the weights' copies, the layer-norms' and gelu's outputs and gelu's
// gradient, 63 rounds of 0.5-8 MB a step.
void CpuExecutor::skip_operand_rounds() {
  const size_t none = steps_.size();
  const auto [step_of, users, output] = schedule_index();
  // By a sum-to's step, the product that sums its input as it packs op(B) (fuse_column_sums).
  std::vector<size_t> summed_by(steps_.size(), none);
  for (size_t i = 0; i < steps_.size(); ++i)
    if (steps_[i].colsum_step) summed_by[i + steps_[i].colsum_step] = i;
  auto bf16_operand = [&](NodeId u, NodeId v) {
    size_t i = step_of[u];
    if (i == none || !steps_[i].compute || !steps_[i].prep.bf16 || steps_[i].region >= 0) return false;
    const Step& s = steps_[i];
    const Node& n = g_.node(u);
    bool operand = n.inputs[0] == v || n.inputs[1] == v;
    if (n.op == Op::Attention) return operand && n.inputs[2] != v && s.fuse == Fuse::None;
    return n.op == Op::Matmul && operand;
  };
  for (size_t at = 0; at < steps_.size(); ++at) {
    Step& s = steps_[at];
    const Node& n = g_.node(s.id);
    if (!s.compute || n.op != Op::RoundBf16 || s.fuse != Fuse::None || s.region >= 0 || s.norm_region >= 0) continue;
    NodeId x = n.inputs[0];
    bool over_x = in_place(s.id, x);
    bool param = g_.node(x).op == Op::Param && plan_.offset[x] < 0;
    bool moved = std::any_of(redirects_.begin(), redirects_.end(), [x](const Redirect& r) { return r.node == x; });
    bool in_arena = !over_x && !moved && plan_.offset[x] >= 0 && plan_.offset[s.id] >= 0;
    if (!over_x && !param && !in_arena) continue;
    // The round's value and its views (from its first byte), each read by
    // products alone, or by a sum-to that a bf16 product makes as it packs
    // the value as op(B) (then summed rounded).
    std::vector<NodeId> same{s.id};
    std::vector<size_t> sums;
    bool only_products = true;
    size_t last = at;  // the last step that reads it
    for (size_t k = 0; only_products && k < same.size(); ++k) {
      only_products = !output[same[k]];
      for (NodeId u : users[same[k]]) {
        size_t by = step_of[u] == none ? none : summed_by[step_of[u]];
        if (plan_.view[u] && plan_.storage[u] == plan_.storage[s.id] && plan_.offset[u] == plan_.offset[s.id]) {
          same.push_back(u);
        } else if (by != none && steps_[by].prep.bf16) {
          sums.push_back(by), last = std::max(last, by);
        } else {
          only_products = only_products && bf16_operand(u, same[k]);
          if (step_of[u] != none) last = std::max(last, step_of[u]);
        }
      }
    }
    // Apart from x, the round is left out where x's bytes hold x until the
    // last reader (x lives on: another step reads it after the round).
    if (!only_products || (in_arena && !untouched(x, at + 1, last))) continue;
    for (size_t by : sums) steps_[by].colsum_rounded = true;
    s.compute = false;
    if (!over_x)
      for (NodeId id : same) redirects_.push_back({id, x});
    ++operand_rounds_;
  }
}

size_t CpuExecutor::lone_round_after(NodeId x, const Schedule& s) const {
  const size_t none = steps_.size();
  if (s.output[x] || s.users[x].size() != 1) return none;
  NodeId u = s.users[x][0];
  size_t r = s.step_of[u];
  if (r == none || g_.node(u).op != Op::RoundBf16 || !steps_[r].compute || steps_[r].fuse != Fuse::None ||
      steps_[r].region >= 0 || !in_place(u, x))
    return none;
  return r;
}

// A round-bf16 in place over attention's output, or over dV, dQ or dK of
// attention's backward by head, that alone reads it: each head's rows are
// rounded as soon as its product has written them, in cache (round_bf16_f,
// as the round's kernel), where the round ran over the whole tensor again
// (at medium, 24 rounds of 2 MB a step). After fold_head_permutes, whose
// rounds between a product and its permute are these, still as steps then.
void CpuExecutor::fuse_output_rounds() {
  const size_t none = steps_.size();
  const Schedule index = schedule_index();
  for (Step& s : steps_) {
    if (!s.compute || g_.node(s.id).op != Op::Attention || s.fuse != Fuse::None) continue;
    size_t r = lone_round_after(s.id, index);
    if (r == none) continue;
    s.prep.round_output = true;
    steps_[r].compute = false;
    ++output_rounds_;
  }
  for (AttentionGradRegion& region : attention_grads_) {
    const size_t products[3] = {region.dv, region.dq, region.dk};
    for (int w = 0; w < 3; ++w) {
      size_t r = lone_round_after(steps_[products[w]].id, index);
      if (r == none) continue;
      region.shape.round[w] = true;
      steps_[r].compute = false;
      ++output_rounds_;
    }
  }
}

}  // namespace sx::cpu
