// The permutes that move attention's heads back ([B, H, T, D] to
// [B, T, H, D]) after the forward attention and after the products of its
// backward (dV, dQ, dK, head by head: executor_attention_grad.cpp), not run:
// those write their rows where the permute would have put them (a row
// stride of H * D), into the permute's own bytes. Each element is the same
// float, so the same bits; a medium step had moved 2 MB a permute, four a
// layer.
#include <algorithm>

#include "backend/cpu/executor.h"

namespace sx::cpu {

namespace {

// A permute of [B, H, T, D] to [B, T, H, D] (dims 1 and 2 swapped).
bool heads_back(const Node& n) {
  const auto& p = n.attrs.perm;
  return n.op == Op::Permute && n.dtype == DType::F32 && n.shape.rank == 4 && p[0] == 0 && p[1] == 2 && p[2] == 1 &&
         p[3] == 3;
}

}  // namespace

void CpuExecutor::fold_head_permutes() {
  const size_t none = steps_.size();
  const Schedule index = schedule_index();
  const auto& [step_of, users, output] = index;
  // The step of the permute that alone reads x (no view between), if it
  // moves heads back, is run on its own and has bytes in the arena.
  auto permute_of = [&](NodeId x) {
    if (output[x] || users[x].size() != 1 || g_.node(x).dtype != DType::F32) return none;
    NodeId u = users[x][0];
    size_t i = step_of[u];
    if (i == none || !steps_[i].compute || steps_[i].fuse != Fuse::None || steps_[i].region >= 0 ||
        !heads_back(g_.node(u)) || plan_.offset[u] < 0)
      return none;
    return i;
  };
  // The permute after x, or after the round-bf16 in place over x that alone
  // reads it (`:precision bf16` rounds attention's output and the
  // backward's products'), and that round.
  auto permute_after = [&](NodeId x, NodeId* round) {
    *round = kNoNode;
    size_t p = permute_of(x);
    if (p != none) return p;
    size_t r = lone_round_after(x, index);
    if (r == none) return none;
    *round = steps_[r].id;
    return permute_of(*round);
  };

  // The forward: attention writes into the permute's bytes, which must not
  // be read or written from the attention on (but by the round).
  for (size_t i = 0; i < steps_.size(); ++i) {
    Step& s = steps_[i];
    const Node& n = g_.node(s.id);
    if (!s.compute || n.op != Op::Attention || s.fuse != Fuse::None || n.shape.rank != 4) continue;
    NodeId round = kNoNode, out = kNoNode;
    size_t p = permute_after(s.id, &round);
    bool free = p != none;
    if (free) out = steps_[p].id;
    for (size_t k = i; free && k < p; ++k) {
      NodeId id = steps_[k].id;
      bool own = id == s.id || id == round;
      free = own || apart(out, id);
      for (NodeId in : g_.node(id).inputs) free = free && (in == s.id || in == round || apart(out, in));
    }
    if (!free) continue;
    s.prep.heads_last = n.shape[1];
    steps_[p].compute = false;
    for (NodeId x : {s.id, round})
      if (x != kNoNode) redirects_.push_back({x, out});
    ++folded_permutes_[static_cast<int>(Folded::AttentionOutput)];
  }

  // The backward's dV, dQ and dK, each written by its region's products in
  // its own bytes, in the permute's layout: the permute's output and its
  // views are then those bytes, which must stay as they are until the last
  // step that reads them. (The permute's own bytes may be the region's
  // inputs' that die in it, such as Q's or dO's, read by every head.)
  for (AttentionGradRegion& r : attention_grads_) {
    const size_t products[3] = {r.dv, r.dq, r.dk};
    for (int w = 0; w < 3; ++w) {
      NodeId x = steps_[products[w]].id, round = kNoNode;
      size_t p = permute_after(x, &round);
      if (p == none) continue;
      NodeId out = steps_[p].id;
      std::vector<NodeId> same;  // the permute and its views
      for (NodeId id : plan_.schedule)
        if (plan_.storage[id] == out) same.push_back(id);
      size_t last = p;
      bool kept = true;
      for (size_t i = p + 1; i < steps_.size(); ++i)
        for (NodeId in : g_.node(steps_[i].id).inputs)
          if (plan_.storage[in] == out) last = i;
      for (NodeId id : same) kept = kept && !output[id];
      // (The plan checked the permute's bytes against the steps', not x's.)
      if (!kept || !untouched(x, p + 1, last)) continue;
      r.shape.heads_last[w] = g_.node(x).shape[1];
      steps_[p].compute = false;
      for (NodeId id : same) redirects_.push_back({id, x});
      ++folded_permutes_[static_cast<int>(Folded::GradProducts)];
    }
  }
}

}  // namespace sx::cpu
