// A layer-norm's or rms-norm's backward found in the schedule and run row
// by row (kernels.h's NormGradRows): the steps autodiff's norm_grads emits
// for the input gradient, recognised by their ops and by who reads what.
// They had been up to 13 passes over [rows, d] tensors (a medium step: 13
// layer-norms, ~0.6 ms each); one pass reads x and gy and writes dx (and gy
// xhat, which the gain's sum-to reads). Anything else leaves the steps as
// they are.
#include <algorithm>
#include <initializer_list>

#include "backend/cpu/executor.h"

namespace sx::cpu {

// The members must be consecutive steps of the schedule (the scalar eps may
// sit between them when only they read it: it is not made), so that every
// other input is made before the first; a fused pair among them is whole.
// Their intermediates must be read only by members and not be outputs.
void CpuExecutor::fuse_norm_grads() {
  const size_t none = steps_.size();
  const auto [step_of, users, output] = schedule_index();
  auto is = [&](NodeId id, Op op, std::initializer_list<NodeId> ins) {
    const Node& n = g_.node(id);
    return n.op == op && n.dtype == DType::F32 && std::vector<NodeId>(ins) == n.inputs;
  };
  auto row_mean = [&](NodeId id) {
    const Node& n = g_.node(id);
    return n.op == Op::Mean && n.dtype == DType::F32 && n.attrs.keep && n.attrs.axis == n.shape.rank - 1;
  };
  auto read_by = [&](NodeId id, std::initializer_list<NodeId> readers) {
    std::vector<NodeId> want(readers), got = users[id];
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    return got == want;
  };
  for (size_t ir = 0; ir < steps_.size(); ++ir) {
    NodeId r = steps_[ir].id;
    const Node& rn = g_.node(r);
    if (rn.op != Op::Rsqrt || rn.dtype != DType::F32 || !steps_[ir].compute) continue;
    // r = rsqrt(mean(xc xc) + eps), xc = x - mean(x) (a layer-norm's) or x (an rms-norm's)
    NodeId ve = rn.inputs[0];
    const Node& vn = g_.node(ve);
    if (vn.op != Op::Add || vn.inputs.size() != 2) continue;
    NodeId var = vn.inputs[0], e = vn.inputs[1];
    const Node& en = g_.node(e);
    if (en.op != Op::Full || en.dtype != DType::F32 || en.shape.numel() != 1 || !row_mean(var)) continue;
    NodeId sq = g_.node(var).inputs[0];
    NodeId xc = g_.node(sq).inputs.empty() ? kNoNode : g_.node(sq).inputs[0];
    if (xc == kNoNode || !is(sq, Op::Mul, {xc, xc})) continue;
    // xhat = xc r; dx = r ((dxhat - xhat mean(dxhat xhat)) - mean(dxhat)), without the last mean for an
    // rms-norm; dxhat = gy gain
    NodeId xhat = kNoNode, dx = kNoNode;
    for (NodeId u : users[r]) {
      if (is(u, Op::Mul, {xc, r})) xhat = u;
      if (g_.node(u).op == Op::Mul && g_.node(u).inputs.size() == 2 && g_.node(u).inputs[0] == r) dx = u;
    }
    if (xhat == kNoNode || dx == kNoNode) continue;
    NodeId inner = g_.node(dx).inputs[1];
    if (g_.node(inner).op != Op::Sub) continue;
    NodeId inner2 = kNoNode, md = kNoNode;
    if (row_mean(g_.node(inner).inputs[1]) && g_.node(g_.node(inner).inputs[0]).op == Op::Sub)
      inner2 = inner, md = g_.node(inner).inputs[1], inner = g_.node(inner).inputs[0];
    const bool centre = inner2 != kNoNode;
    NodeId x = xc, m1 = kNoNode;
    if (centre) {
      if (g_.node(xc).op != Op::Sub) continue;
      x = g_.node(xc).inputs[0], m1 = g_.node(xc).inputs[1];
      if (!row_mean(m1) || g_.node(m1).inputs[0] != x) continue;
    }
    NodeId dxhat = g_.node(inner).inputs[0], u = g_.node(inner).inputs[1];
    if ((centre && g_.node(md).inputs[0] != dxhat) || g_.node(u).op != Op::Mul || g_.node(u).inputs.size() != 2 ||
        g_.node(u).inputs[0] != xhat)
      continue;
    NodeId mt = g_.node(u).inputs[1];
    if (!row_mean(mt)) continue;
    NodeId t = g_.node(mt).inputs[0];
    if (!is(t, Op::Mul, {dxhat, xhat}) || g_.node(dxhat).op != Op::Mul || g_.node(dxhat).inputs.size() != 2) continue;
    NodeId gy = g_.node(dxhat).inputs[0], gain = g_.node(dxhat).inputs[1];
    // gg = gy xhat, for the gain's gradient, if wanted
    NodeId gg = kNoNode;
    for (NodeId v : users[xhat])
      if (is(v, Op::Mul, {gy, xhat})) gg = v;
    const Shape& xs = g_.node(x).shape;
    int64_t d = xs.rank ? xs.back() : 0, rows = d ? xs.numel() / d : 0;
    bool ok = d > 0 && g_.node(x).dtype == DType::F32 && g_.node(gy).shape == xs && g_.node(gy).dtype == DType::F32 &&
              g_.node(gain).shape == Shape{d} && g_.node(gain).dtype == DType::F32 && g_.node(dx).shape == xs &&
              g_.node(dx).dtype == DType::F32 && g_.node(xhat).shape == xs && g_.node(r).shape.numel() == rows;
    ok = ok && read_by(sq, {var}) && read_by(var, {ve}) && read_by(ve, {r}) && read_by(r, {xhat, dx}) &&
         read_by(t, {mt}) && read_by(mt, {u}) && read_by(u, {inner}) &&
         (gg == kNoNode ? read_by(xhat, {t, u}) : read_by(xhat, {t, u, gg}));
    if (centre)
      ok = ok && read_by(m1, {xc}) && read_by(xc, {sq, xhat}) && read_by(dxhat, {t, inner, md}) &&
           read_by(inner, {inner2}) && read_by(md, {inner2}) && read_by(inner2, {dx});
    else
      ok = ok && read_by(dxhat, {t, inner}) && read_by(inner, {dx});
    std::vector<NodeId> held = {sq, var, ve, r, xhat, dxhat, t, mt, u, inner};
    if (centre) held.insert(held.end(), {m1, xc, md, inner2});
    for (NodeId h : held) ok = ok && !output[h] && step_of[h] != none;
    if (!ok) continue;
    std::vector<NodeId> members = held;
    members.push_back(dx);
    if (gg != kNoNode) members.push_back(gg);
    std::vector<size_t> at;
    for (NodeId m : members) ok = ok && step_of[m] != none, at.push_back(step_of[m]);
    if (!ok) continue;
    std::sort(at.begin(), at.end());
    size_t lo = at.front(), hi = at.back();
    auto member = [&](size_t i) { return std::binary_search(at.begin(), at.end(), i); };
    // The add that alone reads dx (the residual stream's two gradients),
    // made in the pass when its other operand is made before the region and
    // the steps it passes over neither read nor write its output's bytes.
    // (A reader comes from the schedule, so it has a step.)
    NodeId sum = users[dx].size() == 1 && !output[dx] ? users[dx][0] : kNoNode, other = kNoNode;
    // (fuse_pairs may have paired it with dx's mul: the pass makes both.)
    bool paired = sum != kNoNode && step_of[sum] == step_of[dx] + 1 && steps_[step_of[sum]].fuse == Fuse::IntoPrevious;
    if (sum != kNoNode && step_of[sum] > hi &&
        (paired || (steps_[step_of[sum]].compute && steps_[step_of[sum]].fuse == Fuse::None)) &&
        g_.node(sum).op == Op::Add && g_.node(sum).shape == xs && g_.node(sum).dtype == DType::F32 &&
        g_.node(sum).inputs.size() == 2) {
      other = g_.node(sum).inputs[g_.node(sum).inputs[0] == dx ? 1 : 0];
      bool fits = other != dx && g_.node(other).shape == xs && g_.node(other).dtype == DType::F32 &&
                  step_of[viewed(other)] != none && step_of[viewed(other)] < lo;
      for (NodeId in : {x, gy, gain, other}) fits = fits && same_or_apart(sum, in);
      if (gg != kNoNode) fits = fits && apart(sum, gg);
      for (size_t i = hi + 1; fits && i < step_of[sum]; ++i) {
        if (!steps_[i].compute) continue;
        fits = apart(sum, steps_[i].id);
        for (NodeId in : g_.node(steps_[i].id).inputs) fits = fits && apart(sum, in);
      }
      if (!fits) sum = other = kNoNode;
    } else {
      sum = kNoNode;
    }

    std::vector<size_t> dropped;
    for (size_t i = lo; ok && i <= hi; ++i) {
      const Step& s = steps_[i];
      if (member(i)) {
        ok = s.region < 0 && s.norm_region < 0 && (s.compute || s.fuse == Fuse::IntoPrevious) && s.then_step == 0 &&
             s.colsum_step == 0;
        if (s.fuse != Fuse::None && s.fuse != Fuse::IntoPrevious)
          ok = ok && (member(i + s.fuse_next) || (sum != kNoNode && steps_[i + s.fuse_next].id == sum));
        if (s.fuse == Fuse::IntoPrevious) ok = ok && i > lo && member(i - 1);
        continue;
      }
      if (!s.compute) continue;  // a param or a view: no work
      ok = s.id == e && read_by(e, {ve}) && !output[e];
      dropped.push_back(i);
    }
    // dx and gg are written once a row's reads are done: over the very bytes
    // of x or gy is as before, over part of them is not.
    for (NodeId out : {dx, gg})
      if (out != kNoNode)
        for (NodeId in : {x, gy, gain}) ok = ok && same_or_apart(out, in);
    if (!ok) continue;

    for (size_t i : at) steps_[i].compute = false;
    for (size_t i : dropped) steps_[i].compute = false;
    steps_[lo].compute = true;
    steps_[lo].norm_region = static_cast<int>(norm_grads_.size());
    if (sum != kNoNode) steps_[step_of[sum]].compute = false, ++fusions_[static_cast<int>(Fuse::LayerNormGradAdd)];
    norm_grads_.push_back({x, gy, gain, sum != kNoNode ? sum : dx, gg, other,
                           sum != kNoNode && g_.node(sum).inputs[0] == other, centre,
                           static_cast<float>(en.attrs.value), rows, d});
    ++fusions_[static_cast<int>(Fuse::LayerNormGrad)];
  }
}

void CpuExecutor::run_norm_grad_region(const NormGradRegion& r) {
  NormGradRows a;
  a.x = static_cast<const float*>(ptr_[r.x]), a.gy = static_cast<const float*>(ptr_[r.gy]);
  a.gain = static_cast<const float*>(ptr_[r.gain]);
  a.dx = static_cast<float*>(ptr_[r.dx]), a.gg = r.gg == kNoNode ? nullptr : static_cast<float*>(ptr_[r.gg]);
  a.rows = r.rows, a.d = r.d, a.eps = r.eps;
  a.other = r.other == kNoNode ? nullptr : static_cast<const float*>(ptr_[r.other]), a.other_first = r.other_first;
  a.centre = r.centre;
  run_layer_norm_grad(a, pool_);
}

}  // namespace sx::cpu
