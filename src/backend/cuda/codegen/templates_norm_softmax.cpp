#include "backend/cuda/codegen/prelude.h"

namespace sx::cuda::codegen {

// One block a row of [rows, d] (the row is blockIdx.x), thread t taking the
// columns t, t + BLOCK, ...: each block sum has a fixed order, so a row's
// statistics are the same bits on every run. Statistics and gains are f32;
// TX, TY, TD (activations in, out, gradients) are float or sx_bf16.
// CENTERED: layer norm (mean subtracted, bias added); otherwise RMS norm.
std::string_view norm_softmax_templates() {
  return R"CUDA(
// y = (x - mean) * rstd * gain + bias; mean and rstd (either may be null)
// kept for the backward. RMS norm: mean 0, no bias.
template <int BLOCK, bool CENTERED, typename TX, typename TY>
__device__ void sx_norm_fwd_row(TY* y, float* mean, float* rstd, const TX* x, const float* gain, const float* bias,
                                int d, float eps) {
  long long row = blockIdx.x;
  const TX* xr = x + row * d;
  float mu = 0.0f;
  if (CENTERED) {
    float s = 0.0f;
    for (int j = threadIdx.x; j < d; j += BLOCK) s += sx_load(xr, j);
    mu = sx_block_sum<BLOCK>(s) / (float)d;
  }
  float q = 0.0f;
  for (int j = threadIdx.x; j < d; j += BLOCK) {
    float c = sx_load(xr, j) - mu;
    q += c * c;
  }
  float r = 1.0f / sqrtf(sx_block_sum<BLOCK>(q) / (float)d + eps);
  if (threadIdx.x == 0) {
    if (mean) mean[row] = mu;
    if (rstd) rstd[row] = r;
  }
  for (int j = threadIdx.x; j < d; j += BLOCK) {
    float v = (sx_load(xr, j) - mu) * r * gain[j];
    if (CENTERED && bias) v = v + bias[j];
    sx_store(y, row * d + j, v);
  }
}

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gain, from the
// forward's statistics (RMS norm: no mean(g) term).
template <int BLOCK, bool CENTERED, typename TX, typename TD>
__device__ void sx_norm_bwd_row(TD* dx, const TD* dy, const TX* x, const float* mean, const float* rstd,
                                const float* gain, int d) {
  long long row = blockIdx.x;
  float mu = CENTERED ? mean[row] : 0.0f, r = rstd[row];
  float s1 = 0.0f, s2 = 0.0f;
  for (int j = threadIdx.x; j < d; j += BLOCK) {
    float g = sx_load(dy, row * d + j) * gain[j];
    s1 += g;
    s2 += g * ((sx_load(x, row * d + j) - mu) * r);
  }
  float mean_g = CENTERED ? sx_block_sum<BLOCK>(s1) / (float)d : 0.0f;
  float mean_gx = sx_block_sum<BLOCK>(s2) / (float)d;
  for (int j = threadIdx.x; j < d; j += BLOCK) {
    float g = sx_load(dy, row * d + j) * gain[j];
    float xhat = (sx_load(x, row * d + j) - mu) * r;
    sx_store(dx, row * d + j, r * (g - mean_g - xhat * mean_gx));
  }
}

// The gain's and bias's gradients: column j is one thread's sum over the
// rows in order (no atomics). A 1-D grid covering d; dbias may be null.
template <int BLOCK, bool CENTERED, typename TX, typename TD>
__device__ void sx_norm_bwd_params(float* dgain, float* dbias, const TD* dy, const TX* x, const float* mean,
                                   const float* rstd, int rows, int d) {
  int j = blockIdx.x * BLOCK + threadIdx.x;
  if (j >= d) return;
  float sg = 0.0f, sb = 0.0f;
  for (long long row = 0; row < rows; ++row) {
    float g = sx_load(dy, row * d + j);
    float mu = CENTERED ? mean[row] : 0.0f;
    sg += g * ((sx_load(x, row * d + j) - mu) * rstd[row]);
    sb += g;
  }
  dgain[j] = sg;
  if (CENTERED && dbias) dbias[j] = sb;
}

// y = exp(x - max) / sum(exp(x - max)) along the row.
template <int BLOCK, typename TX, typename TY>
__device__ void sx_softmax_fwd_row(TY* y, const TX* x, int d) {
  long long row = blockIdx.x;
  float m = sx_neg_inf();
  for (int j = threadIdx.x; j < d; j += BLOCK) m = sx_max(m, sx_load(x, row * d + j));
  m = sx_block_max<BLOCK>(m);
  float s = 0.0f;
  for (int j = threadIdx.x; j < d; j += BLOCK) s += expf(sx_load(x, row * d + j) - m);
  s = sx_block_sum<BLOCK>(s);
  for (int j = threadIdx.x; j < d; j += BLOCK) sx_store(y, row * d + j, expf(sx_load(x, row * d + j) - m) / s);
}

// dx = y * (dy - sum(dy * y)).
template <int BLOCK, typename TY, typename TD>
__device__ void sx_softmax_bwd_row(TD* dx, const TD* dy, const TY* y, int d) {
  long long row = blockIdx.x;
  float s = 0.0f;
  for (int j = threadIdx.x; j < d; j += BLOCK) s += sx_load(dy, row * d + j) * sx_load(y, row * d + j);
  s = sx_block_sum<BLOCK>(s);
  for (int j = threadIdx.x; j < d; j += BLOCK)
    sx_store(dx, row * d + j, sx_load(y, row * d + j) * (sx_load(dy, row * d + j) - s));
}
)CUDA";
}

}  // namespace sx::cuda::codegen
