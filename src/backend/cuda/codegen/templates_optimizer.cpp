#include "backend/cuda/codegen/prelude.h"

namespace sx::cuda::codegen {

// Every parameter's update in one launch: the parameters are slots of one
// flat index space (slot s covers [start, start + n)), each block a chunk of
// it. The arithmetic is runtime/optimizer.cpp's, operation for operation,
// with the scalars the host computes there (compile with --fmad=false for
// its bits: no contraction into fused multiply-adds).
std::string_view optimizer_templates() {
  return R"CUDA(
struct sx_param_slot {
  float* p;
  const float* g;
  float* m;          // Adam's first moment; SGD's momentum buffer (null: no momentum)
  float* v;          // Adam's second moment
  sx_bf16* p_bf16;   // the bf16 copy the products read (null: none)
  long long start;   // the first element in the flat index space
  long long n;
  float decay;       // AdamW: 1 - lr * weight_decay; SGD: weight_decay (0: none)
  float unused;
};

// The slot holding flat element e (slots sorted by start, e < total).
__device__ __forceinline__ int sx_slot_of(const sx_param_slot* slots, int count, long long e) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (slots[mid].start <= e) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// The gradient as the update reads it: g + 0 (a -0 reads as +0), scaled by
// the clip factor when clipping applies.
__device__ __forceinline__ float sx_grad_at(const float* g, long long i, int clip, float coef) {
  float x = g[i] + 0.0f;
  return clip ? x * coef : x;
}

template <int BLOCK, int CHUNK>
__device__ void sx_adam_chunk(const sx_param_slot* slots, int count, long long total, int decoupled, int clip,
                              float coef, float b1, float b2, float one_minus_b1, float one_minus_b2,
                              float bc2_sqrt, float eps, float step_size) {
  long long first = (long long)blockIdx.x * CHUNK;
  for (long long e = first + threadIdx.x; e < first + CHUNK && e < total; e += BLOCK) {
    const sx_param_slot& s = slots[sx_slot_of(slots, count, e)];
    long long i = e - s.start;
    float p = s.p[i];
    if (decoupled) p = p * s.decay;
    float g = sx_grad_at(s.g, i, clip, coef);
    float m = s.m[i] * b1 + one_minus_b1 * g;
    float v = s.v[i] * b2 + one_minus_b2 * g * g;
    s.m[i] = m;
    s.v[i] = v;
    float denom = sqrtf(v) / bc2_sqrt + eps;
    p = p + step_size * m / denom;
    s.p[i] = p;
    if (s.p_bf16) s.p_bf16[i] = sx_f32_to_bf16(p);
  }
}

template <int BLOCK, int CHUNK>
__device__ void sx_sgd_chunk(const sx_param_slot* slots, int count, long long total, int clip, float coef,
                             float momentum, int first_step, int nesterov, float neg_lr) {
  long long first = (long long)blockIdx.x * CHUNK;
  for (long long e = first + threadIdx.x; e < first + CHUNK && e < total; e += BLOCK) {
    const sx_param_slot& s = slots[sx_slot_of(slots, count, e)];
    long long i = e - s.start;
    float p = s.p[i];
    float d = sx_grad_at(s.g, i, clip, coef);
    if (s.decay != 0.0f) d = d + s.decay * p;
    if (s.m) {
      float b = first_step ? d : s.m[i] * momentum + d;
      s.m[i] = b;
      d = nesterov ? d + momentum * b : b;
    }
    p = p + neg_lr * d;
    s.p[i] = p;
    if (s.p_bf16) s.p_bf16[i] = sx_f32_to_bf16(p);
  }
}
)CUDA";
}

}  // namespace sx::cuda::codegen
