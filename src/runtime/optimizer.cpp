#include "runtime/optimizer.h"

#include <cmath>

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

bool glob_match(std::string_view g, std::string_view t) {
  size_t gi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (gi < g.size() && (g[gi] == '?' || g[gi] == t[ti])) {
      ++gi, ++ti;
    } else if (gi < g.size() && g[gi] == '*') {
      star = gi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      gi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (gi < g.size() && g[gi] == '*') ++gi;
  return gi == g.size();
}

Optimizer::Optimizer(const OptimizerSpec& spec, const std::vector<ParamInfo>& params) : spec_(spec) {
  for (const auto& p : params) {
    bool exempt = false;
    for (const auto& g : spec.no_decay) exempt = exempt || glob_match(g, p.path);
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
double norm_of(const std::vector<float>& xs) {
  double s = 0;
  for (float x : xs) s += static_cast<double>(x) * x;
  return std::sqrt(s);
}
}  // namespace

// Each update below follows torch 1.13's single-tensor implementation step by
// step, with scalars rounded to float32 where PyTorch's kernels round them.
StepStats Optimizer::step(ParamStore& params, std::map<std::string, std::vector<float>>& grads, int64_t k,
                          double lr, bool want_stats) {
  StepStats stats;
  double total_sq = 0;
  for (const auto& [path, g] : grads) {
    double n = norm_of(g);
    total_sq += n * n;
    if (want_stats) stats.param_grad_norm[path] = n;
  }
  stats.grad_norm = std::sqrt(total_sq);
  if (spec_.clip) {
    // clip_grad_norm_: coef = max / (norm + 1e-6), clamped to 1, always applied.
    float coef = static_cast<float>(std::min(1.0, *spec_.clip / (stats.grad_norm + 1e-6)));
    if (coef < 1.0f)
      for (auto& [path, g] : grads)
        for (float& x : g) x *= coef;
  }
  const float b1 = static_cast<float>(spec_.beta1), b2 = static_cast<float>(spec_.beta2);
  const float one_minus_b1 = static_cast<float>(1 - spec_.beta1), one_minus_b2 = static_cast<float>(1 - spec_.beta2);
  const double bc1 = 1 - std::pow(spec_.beta1, static_cast<double>(k));
  const double bc2 = 1 - std::pow(spec_.beta2, static_cast<double>(k));
  const float step_size = static_cast<float>(-(lr / bc1));
  const float bc2_sqrt = static_cast<float>(std::sqrt(bc2));
  const float eps = static_cast<float>(spec_.eps);

  for (auto& [path, p] : params.values) {
    std::vector<float>& g = grads.at(path);
    std::vector<float> before;
    if (want_stats) before = p;
    float wd = decays_[path] ? static_cast<float>(spec_.weight_decay) : 0.0f;
    size_t n = p.size();
    if (spec_.kind == "sgd") {
      float mom = static_cast<float>(spec_.momentum);
      float neg_lr = static_cast<float>(-lr);
      std::vector<float>* buf = spec_.momentum != 0 ? &state_["sgd.momentum/" + path] : nullptr;
      for (size_t i = 0; i < n; ++i) {
        float d = g[i];
        if (wd != 0) d = d + wd * p[i];
        if (buf) {
          float& b = (*buf)[i];
          b = k == 1 ? d : b * mom + d;  // the first step's buffer is a copy of the gradient
          d = spec_.nesterov ? d + mom * b : b;
        }
        p[i] = p[i] + neg_lr * d;
      }
    } else {
      std::vector<float>& m = state_[spec_.kind + ".m/" + path];
      std::vector<float>& v = state_[spec_.kind + ".v/" + path];
      const float decay = static_cast<float>(1 - lr * (decays_[path] ? spec_.weight_decay : 0.0));
      if (spec_.kind == "adamw")  // decoupled weight decay first, as torch.optim.AdamW
        for (size_t i = 0; i < n; ++i) p[i] = p[i] * decay;
      for (size_t i = 0; i < n; ++i) {
        m[i] = m[i] * b1 + one_minus_b1 * g[i];
        v[i] = v[i] * b2 + one_minus_b2 * g[i] * g[i];
        float denom = std::sqrt(v[i]) / bc2_sqrt + eps;
        p[i] = p[i] + step_size * m[i] / denom;
      }
    }
    if (want_stats) {
      double du = 0;
      for (size_t i = 0; i < n; ++i) du += static_cast<double>(p[i] - before[i]) * (p[i] - before[i]);
      double pn = norm_of(before);
      stats.param_update_ratio[path] = pn > 0 ? std::sqrt(du) / pn : 0.0;
    }
  }
  return stats;
}

}  // namespace sx
