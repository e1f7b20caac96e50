// O3 so that the update loops vectorise at any build type (and CMakeLists.txt
// compiles this file with -fno-math-errno, which the sqrt needs for it).
#pragma GCC optimize("O3")
#include "runtime/optimizer.h"

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "runtime/run_state.h"  // f32
#include "util/glob.h"

namespace sx {

double schedule_lr(const ScheduleSpec& s, int64_t k, int64_t steps) {
  if (s.kind == "warmup-cosine") {
    if (k <= s.warmup) return s.peak * static_cast<double>(k) / static_cast<double>(s.warmup);
    double span = static_cast<double>(std::max<int64_t>(1, steps - s.warmup));
    return s.min + (s.peak - s.min) * 0.5 * (1 + std::cos(M_PI * static_cast<double>(k - s.warmup) / span));
  }
  if (s.kind == "linear-decay")
    return s.from + (s.to - s.from) * static_cast<double>(k - 1) / static_cast<double>(std::max<int64_t>(1, steps - 1));
  return s.value;
}

Optimizer::Optimizer(const OptimizerSpec& spec, const std::vector<ParamInfo>& params) : spec_(spec) {
  for (const auto& p : params) {
    bool exempt = false;
    for (const auto& g : spec.no_decay) exempt = exempt || model_path_glob_match(g, p.path);
    decays_[p.path] = !exempt;
    size_t n = static_cast<size_t>(p.shape.numel());
    if (spec.kind == "sgd") {
      if (spec.momentum != 0) state_["sgd.momentum/" + p.path].assign(n, 0.0f);
    } else {
      state_[spec.kind + ".m/" + p.path].assign(n, 0.0f);
      state_[spec.kind + ".v/" + p.path].assign(n, 0.0f);
    }
  }
}

namespace {
// Elements a thread of the update takes at the least: starting a thread
// costs tens of microseconds, updating fewer values than this about as much.
constexpr size_t kParallelFloats = size_t{1} << 18;

double norm_of(const float* xs, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += static_cast<double>(xs[i]) * xs[i];
  return std::sqrt(s);
}

// The gradient as the update reads it: g + 0 (the accumulated gradient starts
// from +0, so a -0 gradient reads as +0 whether or not it was accumulated),
// then scaled by the clip factor where clipping applies (clip_grad_norm_
// multiplies the gradient in place).
template <bool Clip>
inline float grad_at(const float* g, size_t i, float coef) {
  float x = g[i] + 0.0f;
  return Clip ? x * coef : x;
}

// Adam's moment and parameter update over n elements, after AdamW's
// decoupled decay (p * decay, rounded, as its own pass over p had done);
// the branches are hoisted so that the loop vectorises (same arithmetic,
// element by element).
template <bool Clip, bool Decay>
void adam_loop(float* __restrict p, const float* __restrict g, float* __restrict m, float* __restrict v, size_t n,
               float decay, float coef, float b1, float b2, float one_minus_b1, float one_minus_b2, float bc2_sqrt,
               float eps, float step_size) {
  for (size_t i = 0; i < n; ++i) {
    float pi = Decay ? p[i] * decay : p[i];
    float gi = grad_at<Clip>(g, i, coef);
    m[i] = m[i] * b1 + one_minus_b1 * gi;
    v[i] = v[i] * b2 + one_minus_b2 * gi * gi;
    float denom = std::sqrt(v[i]) / bc2_sqrt + eps;
    p[i] = pi + step_size * m[i] / denom;
  }
}

// AdamW's decay and Adam's update of one parameter, built for AVX-512, AVX2
// and baseline x86-64 and chosen once by the loader (ifunc). CMakeLists.txt
// compiles this file with -ffp-contract=off, so no clone contracts a * b + c
// into a fused multiply-add: every clone gives the same bits.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void adam_update(float* __restrict p, const float* __restrict g, float* __restrict m, float* __restrict v, size_t n,
                 bool decoupled, float decay, bool clip, float coef, float b1, float b2, float one_minus_b1,
                 float one_minus_b2, float bc2_sqrt, float eps, float step_size) {
  // Decoupled weight decay first, as torch.optim.AdamW, in the same pass.
  // Called directly, so that each clone inlines its own loop.
  if (clip && decoupled)
    adam_loop<true, true>(p, g, m, v, n, decay, coef, b1, b2, one_minus_b1, one_minus_b2, bc2_sqrt, eps, step_size);
  else if (clip)
    adam_loop<true, false>(p, g, m, v, n, decay, coef, b1, b2, one_minus_b1, one_minus_b2, bc2_sqrt, eps, step_size);
  else if (decoupled)
    adam_loop<false, true>(p, g, m, v, n, decay, coef, b1, b2, one_minus_b1, one_minus_b2, bc2_sqrt, eps, step_size);
  else
    adam_loop<false, false>(p, g, m, v, n, decay, coef, b1, b2, one_minus_b1, one_minus_b2, bc2_sqrt, eps, step_size);
}

template <bool Clip>
void sgd_loop(float* __restrict p, const float* __restrict g, float* __restrict buf, size_t n, float coef, float wd,
              float mom, bool first, bool nesterov, float neg_lr) {
  for (size_t i = 0; i < n; ++i) {
    float d = grad_at<Clip>(g, i, coef);
    if (wd != 0) d = d + wd * p[i];
    if (buf) {
      float& b = buf[i];
      b = first ? d : b * mom + d;  // the first step's buffer is a copy of the gradient
      d = nesterov ? d + mom * b : b;
    }
    p[i] = p[i] + neg_lr * d;
  }
}
}  // namespace

const std::vector<Optimizer::Slot>& Optimizer::slots_for(const ParamStore& params) {
  bool same = slots_.size() == params.values.size();
  auto slot = slots_.begin();
  for (auto it = params.values.begin(); same && it != params.values.end(); ++it) same = (slot++)->path == it->first;
  if (same) return slots_;
  slots_.clear();
  for (const auto& [path, pv] : params.values) {
    Slot s{path, nullptr, nullptr, decays_[path]};
    if (spec_.kind == "sgd") {
      if (spec_.momentum != 0) s.m = &state_["sgd.momentum/" + path];
    } else {
      s.m = &state_[spec_.kind + ".m/" + path];
      s.v = &state_[spec_.kind + ".v/" + path];
    }
    slots_.push_back(std::move(s));
  }
  return slots_;
}

// Each update below follows torch 1.13's single-tensor implementation step by
// step, with scalars rounded to float32 where PyTorch's kernels round them.
StepStats Optimizer::step(ParamStore& params, const std::map<std::string, const float*>& grads, int64_t k, double lr,
                          bool want_stats) {
  StepStats stats;
  // The norms (a sequential sum in double over every gradient) only where
  // clipping or the stats need them: nothing else reads them.
  if (spec_.clip || want_stats) {
    double total_sq = 0;
    for (const auto& [path, g] : grads) {
      double n = norm_of(g, params.values.at(path).size());
      total_sq += n * n;
      if (want_stats) stats.param_grad_norm[path] = n;
    }
    stats.grad_norm = std::sqrt(total_sq);
  }
  float coef = 1.0f;
  if (spec_.clip)  // clip_grad_norm_: coef = max / (norm + 1e-6), clamped to 1
    coef = static_cast<float>(std::min(1.0, *spec_.clip / (stats.grad_norm + 1e-6)));
  const bool clip = coef < 1.0f;
  const float b1 = static_cast<float>(spec_.beta1), b2 = static_cast<float>(spec_.beta2);
  const float one_minus_b1 = static_cast<float>(1 - spec_.beta1), one_minus_b2 = static_cast<float>(1 - spec_.beta2);
  const double bc1 = 1 - std::pow(spec_.beta1, static_cast<double>(k));
  const double bc2 = 1 - std::pow(spec_.beta2, static_cast<double>(k));
  const float step_size = static_cast<float>(-(lr / bc1));
  const float bc2_sqrt = static_cast<float>(std::sqrt(bc2));
  const float eps = static_cast<float>(spec_.eps);

  const bool sgd = spec_.kind == "sgd";
  const float mom = static_cast<float>(spec_.momentum), neg_lr = static_cast<float>(-lr);
  // Each parameter's buffers and factor (SGD: its weight decay; Adam: AdamW's 1 - lr wd, or 1), in path order.
  struct Update {
    const std::string* path;
    float *p, *m, *v;  // m: SGD's momentum buffer (or nullptr), else Adam's first moment
    const float* g;
    size_t n;
    float factor;
  };
  std::vector<Update> updates;
  updates.reserve(params.values.size());
  const std::vector<Slot>& slots = slots_for(params);
  auto slot = slots.begin();
  auto grad = grads.begin();
  for (auto& [path, pv] : params.values) {
    const Slot& s = *slot++;
    // The gradients by the same paths in the same order: no search but where they are not.
    const float* g = grad != grads.end() && grad->first == path ? (grad++)->second : grads.at(path);
    Update u{&path, pv.data(), s.m ? s.m->data() : nullptr, s.v ? s.v->data() : nullptr, g, pv.size(), 0.0f};
    if (sgd)
      u.factor = s.decays ? static_cast<float>(spec_.weight_decay) : 0.0f;
    else
      u.factor = static_cast<float>(1 - lr * (s.decays ? spec_.weight_decay : 0.0));
    updates.push_back(u);
  }
  // Elements [b, e) of one parameter.
  auto apply = [&](const Update& u, size_t b, size_t e) {
    float* p = u.p + b;
    const float* g = u.g + b;
    float* m = u.m ? u.m + b : nullptr;
    if (sgd && clip)
      sgd_loop<true>(p, g, m, e - b, coef, u.factor, mom, k == 1, spec_.nesterov, neg_lr);
    else if (sgd)
      sgd_loop<false>(p, g, m, e - b, coef, u.factor, mom, k == 1, spec_.nesterov, neg_lr);
    else
      adam_update(p, g, m, u.v + b, e - b, spec_.kind == "adamw", u.factor, clip, coef, b1, b2, one_minus_b1,
                  one_minus_b2, bc2_sqrt, eps, step_size);
  };

  if (want_stats) {
    for (const Update& u : updates) {
      std::vector<float> before(u.p, u.p + u.n);
      apply(u, 0, u.n);
      double du = 0;
      for (size_t i = 0; i < u.n; ++i) du += static_cast<double>(u.p[i] - before[i]) * (u.p[i] - before[i]);
      double pn = norm_of(before.data(), before.size());
      stats.param_update_ratio[*u.path] = pn > 0 ? std::sqrt(du) / pn : 0.0;
    }
    return stats;
  }
  // A large model's update (five streams of its size, and a square root and
  // two divisions an element: 2.3-3.3 ms a step for 5M parameters on one
  // core) is shared out: thread t takes the t-th of `shares` equal runs of
  // the elements in path order, cut at multiples of 16 values; a share at
  // least kParallelFloats, so that a many-core machine does not start more
  // threads than a mid-sized model's update is worth.
  size_t total = 0;
  for (const Update& u : updates) total += u.n;
  const size_t shares = std::clamp<size_t>(total / kParallelFloats, 1, static_cast<size_t>(threads_));
  auto run_share = [&](size_t t) {
    size_t from = total * t / shares / 16 * 16, to = t + 1 == shares ? total : total * (t + 1) / shares / 16 * 16;
    size_t at = 0;
    for (const Update& u : updates) {
      size_t b = std::max(from, at), e = std::min(to, at + u.n);
      if (b < e) apply(u, b - at, e - at);
      at += u.n;
    }
  };
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < shares; ++t) helpers.emplace_back(run_share, t);
  run_share(0);
  for (std::thread& h : helpers) h.join();
  return stats;
}

namespace {
bool optimizer_tap_selected(const RunDecl& run, const char* name) {
  for (const auto& g : run.diagnostics)
    if (diagnostic_glob_match(g, name)) return true;
  return false;
}
}  // namespace

bool wants_optimizer_taps(const RunDecl& run) {
  return optimizer_tap_selected(run, "grad/norm") || optimizer_tap_selected(run, "update/ratio");
}

void add_optimizer_taps(const RunDecl& run, const StepStats& stats, nlohmann::ordered_json& rec) {
  if (optimizer_tap_selected(run, "grad/norm"))
    for (const auto& [path, n] : stats.param_grad_norm) rec["grad/norm/" + path] = f32(n);
  if (optimizer_tap_selected(run, "update/ratio"))
    for (const auto& [path, r] : stats.param_update_ratio) rec["update/ratio/" + path] = f32(r);
}

}  // namespace sx
