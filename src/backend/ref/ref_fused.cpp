// Fused ops and control ops.
#include <cmath>
#include <limits>

#include "backend/ref/kernels.h"
#include "backend/ref/softmax_line.h"
#include "graph/philox.h"

namespace sx::ref {

namespace {

template <typename T>
void norm(const Node& n, const Ins<T>& in, Tensor<T>& out) {
  const Tensor<T>& x = *in[0];
  const T* gain = in[1]->f.data();
  const T* bias = n.op == Op::LayerNorm ? in[2]->f.data() : nullptr;
  int64_t d = x.shape.back(), rows = x.numel() / std::max<int64_t>(d, 1);
  T eps = static_cast<T>(n.attrs.value);
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x.f.data() + r * d;
    T* yr = out.f.data() + r * d;
    T mu = 0, var = 0;
    if (bias) {
      for (int64_t j = 0; j < d; ++j) mu += xr[j];
      mu /= d;
    }
    for (int64_t j = 0; j < d; ++j) var += (xr[j] - mu) * (xr[j] - mu);
    T rstd = T(1) / std::sqrt(var / d + eps);
    for (int64_t j = 0; j < d; ++j) yr[j] = (xr[j] - mu) * rstd * gain[j] + (bias ? bias[j] : T(0));
  }
}

template <typename T>
void attention(const Node& n, const Ins<T>& in, Tensor<T>& out) {
  const Tensor<T>&q = *in[0], &k = *in[1], &v = *in[2];
  int r = q.shape.rank;
  int64_t tq = q.shape[r - 2], tk = k.shape[r - 2], d = q.shape.back(), dv = v.shape.back();
  int64_t batch = q.numel() / std::max<int64_t>(tq * d, 1);
  T scale = static_cast<T>(n.attrs.value);
  std::vector<T> s(tk), p(tk);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < tq; ++i) {
      const T* qi = q.f.data() + (b * tq + i) * d;
      for (int64_t j = 0; j < tk; ++j) {
        const T* kj = k.f.data() + (b * tk + j) * d;
        T acc = 0;
        for (int64_t l = 0; l < d; ++l) acc += qi[l] * kj[l];
        bool masked = n.attrs.causal && j > i + tk - tq;
        s[j] = masked ? -std::numeric_limits<T>::infinity() : acc * scale;
      }
      softmax_line(s.data(), p.data(), tk, 1, false);
      T* oi = out.f.data() + (b * tq + i) * dv;
      for (int64_t c = 0; c < dv; ++c) {
        T acc = 0;
        for (int64_t j = 0; j < tk; ++j) acc += p[j] * v.f[(b * tk + j) * dv + c];
        oi[c] = acc;
      }
    }
}

// Cross-entropy (mean of logsumexp - logit[target]) or accuracy (mean of argmax == target).
template <typename T>
void per_target(const Node& n, const Ins<T>& in, Tensor<T>& out) {
  const Tensor<T>&logits = *in[0], &targets = *in[1];
  int64_t vocab = logits.shape.back(), rows = targets.numel();
  T total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const T* l = logits.f.data() + r * vocab;
    int64_t t = targets.i[r];
    check_id(n, t, vocab, r);
    T m = -std::numeric_limits<T>::infinity();
    int64_t best = 0;
    for (int64_t j = 0; j < vocab; ++j)
      if (l[j] > m) m = l[j], best = j;
    if (n.op == Op::Accuracy) {
      total += best == t;
    } else {
      T sum = 0;
      for (int64_t j = 0; j < vocab; ++j) sum += std::exp(l[j] - m);
      total += m + std::log(sum) - l[t];
    }
  }
  out.f[0] = rows ? total / static_cast<T>(rows) : std::numeric_limits<T>::quiet_NaN();
}

}  // namespace

template <typename T>
void eval_fused(const Node& n, const Ins<T>& in, Tensor<T>& out, uint64_t rng_offset) {
  const Tensor<T>& x = *in[0];
  switch (n.op) {
    case Op::Softmax:
    case Op::LogSoftmax: {
      AroundAxis s(x.shape, n.attrs.axis);
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
          int64_t base = o * s.n * s.inner + i;
          softmax_line(x.f.data() + base, out.f.data() + base, s.n, s.inner, n.op == Op::LogSoftmax);
        }
      return;
    }
    case Op::LayerNorm:
    case Op::RmsNorm:
      return norm(n, in, out);
    case Op::Attention:
      return attention(n, in, out);
    case Op::Embed: {
      const Tensor<T>& table = *in[1];
      int64_t rows = table.shape[0], d = table.shape[1];
      for (int64_t j = 0; j < x.numel(); ++j) {
        check_id(n, x.i[j], rows, j);
        for (int64_t c = 0; c < d; ++c) out.f[j * d + c] = table.f[x.i[j] * d + c];
      }
      return;
    }
    case Op::CrossEntropy:
    case Op::Accuracy:
      return per_target(n, in, out);
    case Op::Dropout: {
      T scale = static_cast<T>(1.0 / (1.0 - n.attrs.value));
      for (int64_t e = 0; e < x.numel(); ++e)
        out.f[e] = philox::keep(n.attrs.seed, n.attrs.stream, rng_offset, e, n.attrs.value) ? x.f[e] * scale : T(0);
      return;
    }
    case Op::StopGradient:
    case Op::Tap:
      out.f = x.f, out.i = x.i;
      return;
    default:
      SX_ASSERT(false, "not a fused or control op");
  }
}

template void eval_fused<float>(const Node&, const Ins<float>&, Tensor<float>&, uint64_t);
template void eval_fused<double>(const Node&, const Ins<double>&, Tensor<double>&, uint64_t);

}  // namespace sx::ref
