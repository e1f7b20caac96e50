// Attention's backward found in the schedule and run head by head
// (kernels.h's AttentionGradSteps): the steps autodiff's grad_Attention
// emits, after fuse_pairs has paired them, recognised by their ops and by
// who reads what; anything else leaves the steps as they are.
#include <algorithm>
#include <cstring>

#include "backend/cpu/executor.h"
#include "backend/cpu/gemm.h"

namespace sx::cpu {

// A region's steps leave the schedule: its first member runs it, after the
// steps scheduled between its members (the mask's arange / le / full), which
// must read nothing it makes and write nothing it reads or writes, as their
// earlier place allows. Held nodes (S, P, dP, r, dS) must be read only by
// members and not be outputs.
int64_t CpuExecutor::fuse_attention_grads() {
  const size_t none = steps_.size();
  const auto [step_of, users, output] = schedule_index();
  auto transposed = [&](NodeId id) { return plan_.view[id] && plan::is_transpose(g_.node(id)); };
  // The distinct nodes that read x, a folded transpose's readers in its
  // place; {} when another view reads it.
  auto readers = [&](NodeId x) {
    std::vector<NodeId> r;
    for (NodeId u : users[x]) {
      if (!plan_.view[u]) {
        r.push_back(u);
        continue;
      }
      if (!transposed(u)) return std::vector<NodeId>{};
      r.insert(r.end(), users[u].begin(), users[u].end());
    }
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    return r;
  };
  auto fuse_of = [&](NodeId id) { return step_of[id] == none ? Fuse::IntoPrevious : steps_[step_of[id]].fuse; };
  // The node a matmul's operand k reads (a folded transpose's source).
  auto operand = [&](NodeId mm, int k) {
    NodeId x = g_.node(mm).inputs[k];
    return steps_[step_of[mm]].prep.trans[k] ? g_.node(x).inputs[0] : x;
  };
  auto product = [&](NodeId id, int64_t heads) {
    if (step_of[id] == none) return false;
    const Step& t = steps_[step_of[id]];
    const Node& n = g_.node(id);
    return t.compute && t.region < 0 && n.op == Op::Matmul && n.dtype == DType::F32 &&
           (t.fuse == Fuse::None || t.fuse == Fuse::MatmulScale) && !t.prep.mm.merged && t.prep.mm.batches == heads;
  };
  // Product p of `mm` reads matrix p of its operand k (a held node is one head's).
  auto own_head = [&](NodeId mm, int k) {
    const Prep& pr = steps_[step_of[mm]].prep;
    for (int64_t p = 0; p < pr.mm.batches; ++p)
      if (pr.batch[2 * p + k] != p) return false;
    return true;
  };
  int64_t scratch = 0;

  for (size_t iw = 0; iw + 1 < steps_.size(); ++iw) {
    if (steps_[iw].fuse != Fuse::WhereSoftmax) continue;
    NodeId W = steps_[iw].id, P = steps_[iw + 1].id, X = g_.node(W).inputs[1];
    // The scores: a product, or a product and its mul by the scale fused.
    NodeId scores = X;
    if (g_.node(X).op == Op::Mul && fuse_of(X) == Fuse::IntoPrevious)
      for (NodeId in : g_.node(X).inputs)
        if (g_.node(in).op == Op::Matmul && fuse_of(in) == Fuse::MatmulScale) scores = in;
    if (g_.node(scores).op != Op::Matmul || (scores != X && readers(scores) != std::vector<NodeId>{X})) continue;
    const MatmulShape& mm = steps_[step_of[scores]].prep.mm;
    int64_t heads = mm.batches, rows = mm.m, keys = mm.n;
    const Shape& xs = g_.node(X).shape;
    if (!product(scores, heads) || heads < 2 || xs.numel() != heads * rows * keys || xs.back() != keys) continue;
    // Where the scores fit in cache the steps read them from there anyway,
    // and a head at a time only adds calls (tiny's 16 x 16 heads: 5% slower).
    if (bytes(X) <= gemm_caches().l2 / 2) continue;
    if (g_.node(W).shape != xs || g_.node(P).shape != xs || steps_[iw].prep.it.step(2) != 1) continue;
    if (readers(X) != std::vector<NodeId>{W} || readers(W) != std::vector<NodeId>{P}) continue;

    // P's readers: dV's product (through P^T), the mul of the mul + sum, the pair's second step.
    NodeId dv = kNoNode, mul = kNoNode, second = kNoNode;
    std::vector<NodeId> pr = readers(P);
    for (NodeId u : pr) {
      size_t i = step_of[u];
      if (i == none) continue;
      if (g_.node(u).op == Op::Matmul && steps_[i].fuse == Fuse::None) dv = u;
      if (steps_[i].fuse == Fuse::MulReduce) mul = u;
      if (steps_[i].fuse == Fuse::IntoPrevious && i > 0 &&
          (steps_[i - 1].fuse == Fuse::Binary || steps_[i - 1].fuse == Fuse::BinaryScale))
        second = u;
    }
    if (pr.size() != 3 || dv == kNoNode || mul == kNoNode || second == kNoNode) continue;
    if (!product(dv, heads) || operand(dv, 0) != P || !steps_[step_of[dv]].prep.trans[0] || !own_head(dv, 0)) continue;
    const Node& mn = g_.node(mul);
    NodeId dp = mn.inputs[0] == P ? mn.inputs[1] : mn.inputs[0];
    NodeId r = steps_[step_of[mul] + 1].id;
    size_t iu = step_of[second] - 1;
    NodeId first = steps_[iu].id;
    const Node &fn = g_.node(first), &sn = g_.node(second);
    if (mn.inputs.size() != 2 || dp == P || !product(dp, heads) || g_.node(dp).shape != xs) continue;
    if (operand(dp, 0) == P || operand(dp, 1) == P ||
        readers(dp) != std::vector<NodeId>{std::min(mul, first), std::max(mul, first)})
      continue;
    if (g_.node(r).shape.numel() != heads * rows || readers(r) != std::vector<NodeId>{first}) continue;
    bool dp_r = fn.inputs.size() == 2 &&
                ((fn.inputs[0] == dp && fn.inputs[1] == r) || (fn.inputs[0] == r && fn.inputs[1] == dp));
    int slot = sn.inputs[0] == first ? 0 : 1;
    if (!dp_r || !f32_binary(fn.op) || !f32_binary(sn.op) || sn.inputs.size() != 2 || sn.inputs[slot] != first ||
        sn.inputs[1 - slot] != P || sn.shape != xs || readers(first) != std::vector<NodeId>{second})
      continue;
    NodeId ds = second;
    const float* scale = nullptr;
    if (steps_[iu].fuse == Fuse::BinaryScale) {
      std::vector<NodeId> sr = readers(second);
      if (sr.size() != 1 || fuse_of(sr[0]) != Fuse::IntoPrevious || g_.node(sr[0]).op != Op::Mul) continue;
      ds = sr[0];
      scale = &steps_[iu].fuse_scale;
    }
    std::vector<NodeId> dr = readers(ds);
    if (dr.size() != 2 || g_.node(ds).shape != xs) continue;
    NodeId dq = steps_[step_of[dr[0]]].prep.trans[0] ? dr[1] : dr[0], dk = dq == dr[0] ? dr[1] : dr[0];
    if (!product(dq, heads) || !product(dk, heads) || g_.node(dq).inputs[0] != ds || operand(dk, 0) != ds ||
        !steps_[step_of[dk]].prep.trans[0] || operand(dq, 1) == ds || operand(dk, 1) == ds || !own_head(dq, 0) ||
        !own_head(dk, 0))
      continue;
    std::vector<NodeId> held = {scores, X, W, P, dp, mul, r, first, second, ds};
    bool ok = true;
    for (NodeId h : held) ok = ok && !output[h] && g_.node(h).dtype == DType::F32;
    if (!ok) continue;

    // The members' steps, the steps between them, and the bytes they must keep apart.
    std::vector<size_t> members = {step_of[scores], step_of[X],   iw,         iw + 1, step_of[dv],
                                   step_of[dp],     step_of[mul], step_of[r], iu,     iu + 1,
                                   step_of[ds],     step_of[dq],  step_of[dk]};
    size_t lo = *std::min_element(members.begin(), members.end()),
           hi = *std::max_element(members.begin(), members.end());
    std::vector<NodeId> reads = {g_.node(scores).inputs[0], g_.node(scores).inputs[1], g_.node(W).inputs[0],
                                 g_.node(W).inputs[2],      g_.node(dv).inputs[1],     g_.node(dp).inputs[0],
                                 g_.node(dp).inputs[1],     g_.node(dq).inputs[1],     g_.node(dk).inputs[1]};
    std::vector<NodeId> writes = {dv, dq, dk};
    auto made_at = [&](NodeId x) { return step_of[viewed(x)]; };  // the step that writes x's values
    auto is_member = [&](NodeId u) {
      for (size_t m : members)
        if (steps_[m].id == u) return true;
      return false;
    };
    std::vector<size_t> hoisted, dropped;
    for (size_t i = lo + 1; ok && i < hi; ++i) {
      if (std::find(members.begin(), members.end(), i) != members.end() || !steps_[i].compute) continue;
      const Step& t = steps_[i];
      // A constant only members read and none at run time (the pair's scale,
      // which the fused pass takes from the node) need not be made at all.
      bool unread = std::find(reads.begin(), reads.end(), t.id) == reads.end() && !output[t.id];
      for (NodeId u : users[t.id]) unread = unread && is_member(u);
      if (unread && g_.node(t.id).op == Op::Full) {
        dropped.push_back(i);
        continue;
      }
      ok = t.fuse == Fuse::None && t.region < 0;
      for (NodeId in : g_.node(t.id).inputs)
        for (size_t m : members) ok = ok && viewed(in) != steps_[m].id;
      // The hoisted run in their order: over bytes of a read that a later one makes is as before.
      for (NodeId x : reads) ok = ok && (x == t.id || apart(t.id, x) || (made_at(x) > i && made_at(x) < hi));
      hoisted.push_back(i);
    }
    if (!ok) continue;
    // dV, dQ or dK over bytes that a later head still reads (the plan may
    // put them over an operand's dead bytes, or a hoisted step's) goes to
    // the staging buffer, copied into place once every head is done.
    int64_t stage[3] = {-1, -1, -1}, staged = 0;
    for (int w = 0; w < 3; ++w) {
      bool alone = true;
      for (NodeId x : reads) alone = alone && apart(writes[w], x);
      for (size_t h : hoisted) alone = alone && apart(writes[w], steps_[h].id);
      if (alone) continue;
      stage[w] = staged;
      staged += g_.node(writes[w]).shape.numel();
    }
    staging_floats_ = std::max(staging_floats_, staged);

    AttentionGradRegion region{step_of[scores],
                               iw,
                               step_of[dv],
                               step_of[dp],
                               step_of[mul],
                               iu,
                               step_of[dq],
                               step_of[dk],
                               hoisted,
                               {stage[0], stage[1], stage[2]},
                               {}};
    AttentionGradSteps& s = region.shape;
    s.second_slot = slot, s.scale = scale;
    s.S = X, s.P = P, s.dP = dp, s.r = r, s.dS = ds;
    s.heads = heads, s.rows = rows, s.keys = keys;
    int64_t widest = 0;
    double flops = 0;  // grouped as matmul's products are (plan_matmul)
    for (NodeId m : {scores, dv, dp, dq, dk}) {
      const MatmulShape& t = steps_[step_of[m]].prep.mm;
      widest = std::max(widest, t.n);
      flops += 2.0 * static_cast<double>(t.m * t.n * t.k * heads);
    }
    s.chunks = std::clamp<int64_t>(static_cast<int64_t>(flops / (kGemmParallelFlops / 2)), 1, heads);
    scratch = std::max(scratch, attention_grad_scratch(rows, keys, widest));
    for (size_t m : members) steps_[m].compute = false;
    for (size_t h : hoisted) steps_[h].compute = false;
    for (size_t h : dropped) steps_[h].compute = false;
    steps_[lo].compute = true;
    steps_[lo].region = static_cast<int>(attention_grads_.size());
    attention_grads_.push_back(std::move(region));
    ++fusions_[static_cast<int>(Fuse::AttentionGrad)];
  }
  return scratch;
}

Args CpuExecutor::args(size_t i, uint64_t rng_offset) {
  Step& t = steps_[i];
  return Args{g_.node(t.id), g_,        t.ins.data(), ptr_[t.id], t.prep, pool_, scratch_ptrs_.data(),
              shared_.get(), rng_offset};
}

void CpuExecutor::run_attention_grad_region(const AttentionGradRegion& r, uint64_t rng_offset) {
  for (size_t h : r.hoisted) execute(steps_[h], rng_offset);
  Args scores = args(r.scores, rng_offset), where = args(r.where, rng_offset), softmax = args(r.where + 1, rng_offset),
       dv = args(r.dv, rng_offset), dp = args(r.dp, rng_offset), mul = args(r.mul, rng_offset),
       reduce = args(r.mul + 1, rng_offset), first = args(r.first, rng_offset), second = args(r.first + 1, rng_offset),
       dq = args(r.dq, rng_offset), dk = args(r.dk, rng_offset);
  Args* out[3] = {&dv, &dq, &dk};
  for (int w = 0; w < 3; ++w)
    if (r.stage[w] >= 0) out[w]->out = staging_.get() + r.stage[w];
  AttentionGradSteps s = r.shape;
  s.scores = &scores, s.where = &where, s.softmax = &softmax, s.dv = &dv, s.dp = &dp, s.mul = &mul;
  s.reduce = &reduce, s.first = &first, s.second = &second, s.dq = &dq, s.dk = &dk;
  heads_skipping_zeros_ += run_attention_grad(s, pool_, scratch_ptrs_.data());
  const size_t steps[3] = {r.dv, r.dq, r.dk};
  for (int w = 0; w < 3; ++w)
    if (r.stage[w] >= 0)
      std::memcpy(ptr_[steps_[steps[w]].id], out[w]->out, g_.node(steps_[steps[w]].id).shape.numel() * 4);
}

}  // namespace sx::cpu
