// The interpreter's intrinsics (the fused ops, each the reference backend's
// formula in f32) and the optimizer kernel (runtime/optimizer.cpp's
// arithmetic, operation for operation, with the host's f32 scalars).
#include <cmath>
#include <cstring>
#include <limits>

#include "backend/cuda/kir_interp_internal.h"
#include "backend/ref/elementwise.h"
#include "backend/ref/softmax_line.h"
#include "graph/philox.h"
#include "util/error.h"

namespace sx::cuda::kir {

float round_bf16(float x) { return from_bf16_bits(to_bf16_bits(x)); }

uint16_t to_bf16_bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  if ((b & 0x7f800000u) != 0x7f800000u) b = b + 0x7fffu + ((b >> 16) & 1u);  // inf and NaN stay
  return static_cast<uint16_t>(b >> 16);
}

float from_bf16_bits(uint16_t h) {
  uint32_t b = uint32_t{h} << 16;
  float x;
  std::memcpy(&x, &b, 4);
  return x;
}

namespace detail {

float gelu(float x) { return ref::unary_float(Op::Gelu, x); }
float gelu_grad(float x) { return ref::unary_float(Op::GeluGrad, x); }

namespace {

struct AroundAxis {
  int64_t outer = 1, n = 1, inner = 1;
  AroundAxis(const Shape& s, int axis) {
    for (int d = 0; d < s.rank; ++d) (d < axis ? outer : d == axis ? n : inner) *= s[d];
  }
};

// Register `r` as a full array of space `sp` (broadcast when it is smaller).
std::vector<float> full(const Kernel& k, const std::vector<Value>& regs, Reg r, int sp) {
  int from = k.regs[r].space;
  const Value& v = regs[r];
  if (from == sp) return v.f;
  auto m = broadcast_map(k.spaces[sp], k.spaces[from]);
  std::vector<float> out(m.size());
  for (size_t i = 0; i < m.size(); ++i) out[i] = v.f[m[i]];
  return out;
}

void check_target(const Stmt& s, int64_t t, int64_t vocab, int64_t r) {
  if (t < 0 || t >= vocab)
    throw user_error(Code::SHAPE_012, s.span, "{}: expected ids in [0, {}), found {} (element {} of the ids)",
                     s.intrinsic == Intrinsic::CrossEntropyRow ? "cross-entropy" : "accuracy", vocab, t, r);
}

void attention(const Kernel& k, const Stmt& s, std::vector<Value>& regs, Value& out) {
  const Shape &qs = k.spaces[k.regs[s.args[0]].space], &ks = k.spaces[k.regs[s.args[1]].space],
              &vs = k.spaces[k.regs[s.args[2]].space];
  const float *q = regs[s.args[0]].f.data(), *kk = regs[s.args[1]].f.data(), *v = regs[s.args[2]].f.data();
  int r = qs.rank;
  int64_t tq = qs[r - 2], tk = ks[r - 2], d = qs.back(), dv = vs.back();
  int64_t batch = qs.numel() / std::max<int64_t>(tq * d, 1);
  float scale = static_cast<float>(s.value);
  std::vector<float> sc(tk), p(tk);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < tq; ++i) {
      const float* qi = &q[(b * tq + i) * d];
      for (int64_t j = 0; j < tk; ++j) {
        const float* kj = &kk[(b * tk + j) * d];
        float acc = 0;
        for (int64_t l = 0; l < d; ++l) acc += qi[l] * kj[l];
        bool masked = s.causal && j > i + tk - tq;
        sc[j] = masked ? -std::numeric_limits<float>::infinity() : acc * scale;
      }
      ref::softmax_line(sc.data(), p.data(), tk, 1, false);
      float* oi = &out.f[(b * tq + i) * dv];
      for (int64_t c = 0; c < dv; ++c) {
        float acc = 0;
        for (int64_t j = 0; j < tk; ++j) acc += p[j] * v[(b * tk + j) * dv + c];
        oi[c] = acc;
      }
    }
}

}  // namespace

void run_intrinsic(const Kernel& k, const Stmt& s, std::vector<Value>& regs, const std::vector<Scalar>& scalars) {
  const Shape& sp = k.spaces[s.space];
  Value out;
  out.type = RegType::f32;
  out.f.assign(static_cast<size_t>(sp.numel()), 0.0f);
  switch (s.intrinsic) {
    case Intrinsic::Softmax:
    case Intrinsic::LogSoftmax: {
      std::vector<float> x = full(k, regs, s.args[0], s.space);
      AroundAxis a(sp, s.axis);
      for (int64_t o = 0; o < a.outer; ++o)
        for (int64_t i = 0; i < a.inner; ++i) {
          int64_t base = o * a.n * a.inner + i;
          ref::softmax_line(&x[base], &out.f[base], a.n, a.inner, s.intrinsic == Intrinsic::LogSoftmax);
        }
      break;
    }
    case Intrinsic::LayerNorm:
    case Intrinsic::RmsNorm: {
      bool ln = s.intrinsic == Intrinsic::LayerNorm;
      std::vector<float> x = full(k, regs, s.args[0], s.space), gain = full(k, regs, s.args[1], s.space);
      std::vector<float> bias = ln ? full(k, regs, s.args[2], s.space) : std::vector<float>();
      int64_t d = sp.rank ? sp.back() : 1, rows = sp.numel() / std::max<int64_t>(d, 1);
      float eps = static_cast<float>(s.value);
      for (int64_t r = 0; r < rows; ++r) {
        const float* xr = &x[r * d];
        float* yr = &out.f[r * d];
        float mu = 0, var = 0;
        if (ln) {
          for (int64_t j = 0; j < d; ++j) mu += xr[j];
          mu /= d;
        }
        for (int64_t j = 0; j < d; ++j) var += (xr[j] - mu) * (xr[j] - mu);
        float rstd = 1.0f / std::sqrt(var / d + eps);
        for (int64_t j = 0; j < d; ++j) yr[j] = (xr[j] - mu) * rstd * gain[r * d + j] + (ln ? bias[r * d + j] : 0.0f);
      }
      break;
    }
    case Intrinsic::CrossEntropyRow:
    case Intrinsic::AccuracyRow: {
      int lsp = k.regs[s.args[0]].space;
      const std::vector<float> logits = full(k, regs, s.args[0], lsp);
      const Value& target = regs[s.args[1]];
      int64_t vocab = k.spaces[lsp].back(), rows = sp.numel();
      for (int64_t r = 0; r < rows; ++r) {
        const float* l = &logits[r * vocab];
        int64_t t = target.i[k.regs[s.args[1]].space == s.space ? r : 0];
        check_target(s, t, vocab, r);
        float m = -std::numeric_limits<float>::infinity();
        int64_t best = 0;
        for (int64_t j = 0; j < vocab; ++j)
          if (l[j] > m) m = l[j], best = j;
        if (s.intrinsic == Intrinsic::AccuracyRow) {
          out.f[r] = best == t ? 1.0f : 0.0f;
        } else {
          float sum = 0;
          for (int64_t j = 0; j < vocab; ++j) sum += std::exp(l[j] - m);
          out.f[r] = m + std::log(sum) - l[t];
        }
      }
      break;
    }
    case Intrinsic::Dropout: {
      uint64_t offset = 0;
      for (size_t i = 0; i < k.scalars.size(); ++i)
        if (k.scalars[i].name == "rng_offset") offset = scalars.at(i).u;
      std::vector<float> x = full(k, regs, s.args[0], s.space);
      float scale = static_cast<float>(1.0 / (1.0 - s.value));
      for (int64_t e = 0; e < sp.numel(); ++e)
        out.f[e] = philox::keep(s.seed, s.stream, offset, static_cast<uint64_t>(e), s.value) ? x[e] * scale : 0.0f;
      break;
    }
    case Intrinsic::Attention:
      attention(k, s, regs, out);
      break;
    default:
      SX_ASSERT(false, "kir: an intrinsic it does not know");
  }
  regs[s.out] = std::move(out);
}

}  // namespace detail

namespace {

double get_norm(const void* norms, size_t i) {
  double v;
  std::memcpy(&v, static_cast<const char*>(norms) + 8 * i, 8);
  return v;
}

}  // namespace

void interpret_optimizer(const Kernel& k, const std::vector<void*>& b, const std::vector<Scalar>& scalars) {
  const Optimizer& o = k.optimizer;
  auto f32 = [&](int i) { return static_cast<float*>(b.at(static_cast<size_t>(i))); };
  if (o.stage == Optimizer::Stage::GradNorm) {
    double total_sq = 0;
    char* norms = static_cast<char*>(b.at(static_cast<size_t>(o.norms)));
    for (size_t t = 0; t < o.tensors.size(); ++t) {
      const float* g = f32(o.tensors[t].grad);
      double s = 0;
      for (int64_t i = 0; i < o.tensors[t].elements; ++i) s += static_cast<double>(g[i]) * g[i];
      double n = std::sqrt(s);
      total_sq += n * n;
      std::memcpy(norms + 8 * t, &n, 8);
    }
    double norm = std::sqrt(total_sq);
    std::memcpy(norms + 8 * o.tensors.size(), &norm, 8);
    return;
  }
  auto sc = [&](size_t i) { return static_cast<float>(scalars.at(i).f); };
  float coef = 1.0f;
  if (o.clip > 0) coef = static_cast<float>(std::min(1.0, o.clip / (get_norm(b.at(o.norms), o.tensors.size()) + 1e-6)));
  const bool clip = coef < 1.0f;
  auto grad_at = [&](const float* g, int64_t i) {
    float x = g[i] + 0.0f;
    return clip ? x * coef : x;
  };
  for (const OptimizerTensor& t : o.tensors) {
    float* p = f32(t.param);
    const float* g = f32(t.grad);
    int64_t n = t.elements;
    if (o.algorithm == Optimizer::Algorithm::Sgd) {
      float wd = t.decays ? sc(0) : 0.0f, mom = sc(1), neg_lr = sc(2);
      bool first = sc(3) != 0;
      float* buf = t.state0 >= 0 ? f32(t.state0) : nullptr;
      for (int64_t i = 0; i < n; ++i) {
        float d = grad_at(g, i);
        if (wd != 0) d = d + wd * p[i];
        if (buf) {
          float& bb = buf[i];
          bb = first ? d : bb * mom + d;
          d = o.nesterov ? d + mom * bb : bb;
        }
        p[i] = p[i] + neg_lr * d;
      }
    } else {
      float b1 = sc(0), b2 = sc(1), omb1 = sc(2), omb2 = sc(3), bc2_sqrt = sc(4), eps = sc(5), step_size = sc(6);
      float decay = t.decays ? sc(7) : sc(8);
      float *m = f32(t.state0), *v = f32(t.state1);
      if (o.algorithm == Optimizer::Algorithm::AdamW)
        for (int64_t i = 0; i < n; ++i) p[i] = p[i] * decay;
      for (int64_t i = 0; i < n; ++i) {
        float gi = grad_at(g, i);
        m[i] = m[i] * b1 + omb1 * gi;
        v[i] = v[i] * b2 + omb2 * gi * gi;
        float denom = std::sqrt(v[i]) / bc2_sqrt + eps;
        p[i] = p[i] + step_size * m[i] / denom;
      }
    }
    if (t.copy >= 0) {
      auto* c = static_cast<uint16_t*>(b.at(static_cast<size_t>(t.copy)));
      for (int64_t i = 0; i < n; ++i) c[i] = to_bf16_bits(p[i]);
    }
  }
}

}  // namespace sx::cuda::kir
