#include "backend/cuda/codegen/prelude.h"

namespace sx::cuda::codegen {

// The fused classifier (llm.c's): one block a row of logits computes the
// row's loss and, when asked, its gradient, never storing the
// probabilities. Attention for small heads: one block a query row (the
// forward and dq) or a key row (dk, dv), the row's scores in shared memory;
// every sum in a fixed order, no atomics.
std::string_view loss_attention_templates() {
  return R"CUDA(
// loss_rows[row] = logsumexp(logits) - logits[target] (NaN for a target out
// of range); dlogits, when not null, = (softmax - onehot(target)) * scale
// with scale = *dloss * inv_rows (dloss null: inv_rows).
template <int BLOCK, typename TL, typename TD>
__device__ void sx_cross_entropy_row(float* loss_rows, TD* dlogits, const TL* logits, const int* targets,
                                     const float* dloss, float inv_rows, int vocab) {
  long long row = blockIdx.x;
  const TL* l = logits + row * vocab;
  int t = targets[row];
  float m = sx_neg_inf();
  for (int j = threadIdx.x; j < vocab; j += BLOCK) m = sx_max(m, sx_load(l, j));
  m = sx_block_max<BLOCK>(m);
  float s = 0.0f;
  for (int j = threadIdx.x; j < vocab; j += BLOCK) s += expf(sx_load(l, j) - m);
  s = sx_block_sum<BLOCK>(s);
  bool valid = t >= 0 && t < vocab;
  if (threadIdx.x == 0) loss_rows[row] = valid ? m + logf(s) - sx_load(l, t) : sx_nan();
  if (dlogits) {
    float scale = dloss ? *dloss * inv_rows : inv_rows;
    for (int j = threadIdx.x; j < vocab; j += BLOCK) {
      float p = expf(sx_load(l, j) - m) / s;
      sx_store(dlogits, row * vocab + j, ((j == t ? p - 1.0f : p)) * scale);
    }
  }
}

// out[0] = the mean of in[0..n), one block, a fixed order.
template <int BLOCK>
__device__ void sx_mean_row(float* out, const float* in, int n) {
  float s = 0.0f;
  for (int j = threadIdx.x; j < n; j += BLOCK) s += in[j];
  s = sx_block_sum<BLOCK>(s);
  if (threadIdx.x == 0) out[0] = n > 0 ? s / (float)n : sx_nan();
}

// q [B, tq, d], k [B, tk, d], v [B, tk, dv] -> out [B, tq, dv] and the rows'
// logsumexp lse [B, tq] (may be null) for the backward. One block a row
// b * tq + i; key j is masked when causal and j > i + tk - tq.
template <typename TQ>
__device__ float sx_dot(const TQ* a, const TQ* b, int n) {
  float acc = 0.0f;
  for (int l = 0; l < n; ++l) acc += sx_load(a, l) * sx_load(b, l);
  return acc;
}
template <int BLOCK, int MAXK, typename TQ, typename TO>
__device__ void sx_attention_fwd_row(TO* out, float* lse, const TQ* q, const TQ* k, const TQ* v, int tq, int tk,
                                     int d, int dv, float scale, int causal) {
  __shared__ float p[MAXK];
  long long row = blockIdx.x, b = row / tq;
  int i = (int)(row % tq);
  const TQ* qi = q + row * d;
  float m = sx_neg_inf();
  for (int j = threadIdx.x; j < tk; j += BLOCK) {
    bool masked = causal && j > i + tk - tq;
    float s = masked ? sx_neg_inf() : sx_dot(qi, k + (b * tk + j) * d, d) * scale;
    p[j] = s;
    m = sx_max(m, s);
  }
  m = sx_block_max<BLOCK>(m);
  float sum = 0.0f;
  for (int j = threadIdx.x; j < tk; j += BLOCK) {
    float e = expf(p[j] - m);
    p[j] = e;
    sum += e;
  }
  sum = sx_block_sum<BLOCK>(sum);
  for (int j = threadIdx.x; j < tk; j += BLOCK) p[j] = p[j] / sum;
  __syncthreads();
  for (int c = threadIdx.x; c < dv; c += BLOCK) {
    float acc = 0.0f;
    for (int j = 0; j < tk; ++j) acc += p[j] * sx_load(v, (b * tk + j) * dv + c);
    sx_store(out, row * dv + c, acc);
  }
  if (threadIdx.x == 0 && lse) lse[row] = m + logf(sum);
  __syncthreads();  // p is read by every thread before the block ends
}

// The backward, in two launches. Query rows: delta[row] = dout . out, then
// ds_j = p_j (dout . v_j - delta) and dq = scale * sum_j ds_j k_j.
template <int BLOCK, int MAXK, typename TQ, typename TD>
__device__ void sx_attention_bwd_q_row(TD* dq, float* delta, const TD* dout, const TQ* out, const TQ* q, const TQ* k,
                                       const TQ* v, const float* lse, int tq, int tk, int d, int dv, float scale,
                                       int causal) {
  __shared__ float ds[MAXK];
  long long row = blockIdx.x, b = row / tq;
  int i = (int)(row % tq);
  float dl = 0.0f;
  for (int c = threadIdx.x; c < dv; c += BLOCK) dl += sx_load(dout, row * dv + c) * sx_load(out, row * dv + c);
  float di = sx_block_sum<BLOCK>(dl);
  for (int j = threadIdx.x; j < tk; j += BLOCK) {
    bool masked = causal && j > i + tk - tq;
    float p = masked ? 0.0f : expf(sx_dot(q + row * d, k + (b * tk + j) * d, d) * scale - lse[row]);
    float dp = sx_dot(dout + row * dv, v + (b * tk + j) * dv, dv);
    ds[j] = p * (dp - di);
  }
  __syncthreads();
  for (int c = threadIdx.x; c < d; c += BLOCK) {
    float acc = 0.0f;
    for (int j = 0; j < tk; ++j) acc += ds[j] * sx_load(k, (b * tk + j) * d + c);
    sx_store(dq, row * d + c, acc * scale);
  }
  if (threadIdx.x == 0) delta[row] = di;
  __syncthreads();
}

// Key rows (one block a row b * tk + j): dv_j = sum_i p_ij dout_i and
// dk_j = scale * sum_i ds_ij q_i, the query rows in order.
template <int BLOCK, int MAXK, typename TQ, typename TD>
__device__ void sx_attention_bwd_kv_row(TD* dk, TD* dvv, const TD* dout, const TQ* q, const TQ* k, const TQ* v,
                                        const float* lse, const float* delta, int tq, int tk, int d, int dv,
                                        float scale, int causal) {
  __shared__ float ps[MAXK];
  __shared__ float ds[MAXK];
  long long row = blockIdx.x, b = row / tk;
  int j = (int)(row % tk);
  for (int i = threadIdx.x; i < tq; i += BLOCK) {
    long long qi = b * tq + i;
    bool masked = causal && j > i + tk - tq;
    float p = masked ? 0.0f : expf(sx_dot(q + qi * d, k + row * d, d) * scale - lse[qi]);
    float dp = sx_dot(dout + qi * dv, v + row * dv, dv);
    ps[i] = p;
    ds[i] = p * (dp - delta[qi]);
  }
  __syncthreads();
  for (int c = threadIdx.x; c < dv; c += BLOCK) {
    float acc = 0.0f;
    for (int i = 0; i < tq; ++i) acc += ps[i] * sx_load(dout, (b * tq + i) * dv + c);
    sx_store(dvv, row * dv + c, acc);
  }
  for (int c = threadIdx.x; c < d; c += BLOCK) {
    float acc = 0.0f;
    for (int i = 0; i < tq; ++i) acc += ds[i] * sx_load(q, (b * tq + i) * d + c);
    sx_store(dk, row * d + c, acc * scale);
  }
  __syncthreads();
}
)CUDA";
}

}  // namespace sx::cuda::codegen
