// The round-bf16 steps of `:precision bf16` (graph/precision.h) that are
// not run, for the same bits: those over values already bf16, and those
// whose value only bf16 products read, which round their operands as they
// pack them.
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
    bool in_place = plan_.offset[s.id] >= 0 && plan_.offset[s.id] == plan_.offset[x] && bytes(s.id) == bytes(x);
    if (!in_place || !holds_bf16_values(g_, x)) continue;
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
// the step), whose bytes the round's value and views then are. Not where a
// product reads the operand otherwise: attention's backward by head (which
// decides from its operands' magnitudes how to skip the mask's zeros),
// attention's v (its product with P is f32). (A weight gradient that sums
// op(B)'s rows as it packs them, MatmulColumnSum, does so for a sum-to that
// reads them too.) At medium: the weights' copies and the layer-norms' and
// gelu's outputs, 57 rounds of 0.5-8 MB a step.
void CpuExecutor::skip_operand_rounds() {
  const size_t none = steps_.size();
  const auto [step_of, users, output] = schedule_index();
  auto bf16_operand = [&](NodeId u, NodeId v) {
    size_t i = step_of[u];
    if (i == none || !steps_[i].compute || !steps_[i].prep.bf16 || steps_[i].region >= 0) return false;
    const Step& s = steps_[i];
    const Node& n = g_.node(u);
    bool operand = n.inputs[0] == v || n.inputs[1] == v;
    if (n.op == Op::Attention) return operand && n.inputs[2] != v && s.fuse == Fuse::None;
    return n.op == Op::Matmul && operand;
  };
  for (Step& s : steps_) {
    const Node& n = g_.node(s.id);
    if (!s.compute || n.op != Op::RoundBf16 || s.fuse != Fuse::None || s.region >= 0 || s.norm_region >= 0) continue;
    NodeId x = n.inputs[0];
    bool in_place = plan_.offset[s.id] >= 0 && plan_.offset[s.id] == plan_.offset[x] && bytes(s.id) == bytes(x);
    bool param = g_.node(x).op == Op::Param && plan_.offset[x] < 0;
    if (!in_place && !param) continue;
    // The round's value and its views (from its first byte), each read by products alone.
    std::vector<NodeId> same{s.id};
    bool only_products = true;
    for (size_t k = 0; only_products && k < same.size(); ++k) {
      only_products = !output[same[k]];
      for (NodeId u : users[same[k]]) {
        if (plan_.view[u] && plan_.storage[u] == plan_.storage[s.id] && plan_.offset[u] == plan_.offset[s.id])
          same.push_back(u);
        else
          only_products = only_products && bf16_operand(u, same[k]);
      }
    }
    if (!only_products) continue;
    s.compute = false;
    if (param)
      for (NodeId id : same) redirects_.push_back({id, x});
    ++operand_rounds_;
  }
}

}  // namespace sx::cpu
