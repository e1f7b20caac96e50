#include "backend/cuda/codegen/prelude.h"

namespace sx::cuda::codegen {

// Why each helper is written the way it is:
// - sx_bf16 rounds to nearest even like ref::round_bf16 (inf and NaN stay;
//   a NaN keeps a mantissa bit so that storing it cannot make it an inf).
// - The warp sum is a butterfly (xor shuffles): partner lanes add the same
//   two values, so every lane ends with the same bits. The block sum is the
//   warps' sums, each warp then reducing the per-warp partials itself, in
//   the same order: every thread gets the same bits, for any schedule.
// - GELU is graph/ops.def's tanh approximation with ref_elementwise's
//   constants; exp/log/tanh are CUDA's accurate (non-fast) functions.
std::string_view prelude_source() {
  return R"CUDA(// sexpgpu prelude: no includes
struct __align__(2) sx_bf16 {
  unsigned short bits;
};
__device__ __forceinline__ float sx_bf16_to_f32(sx_bf16 h) { return __uint_as_float(((unsigned)h.bits) << 16); }
__device__ __forceinline__ sx_bf16 sx_f32_to_bf16(float x) {
  unsigned b = __float_as_uint(x);
  sx_bf16 h;
  if ((b & 0x7f800000u) == 0x7f800000u) {
    h.bits = (unsigned short)((b >> 16) | ((b & 0x007fffffu) != 0u ? 0x0040u : 0u));
    return h;
  }
  b = b + 0x7fffu + ((b >> 16) & 1u);
  h.bits = (unsigned short)(b >> 16);
  return h;
}
__device__ __forceinline__ float sx_round_bf16(float x) {
  unsigned b = __float_as_uint(x);
  if ((b & 0x7f800000u) == 0x7f800000u) return x;
  return __uint_as_float((b + 0x7fffu + ((b >> 16) & 1u)) & 0xffff0000u);
}

__device__ __forceinline__ float sx_load(const float* p, long long i) { return p[i]; }
__device__ __forceinline__ float sx_load(const sx_bf16* p, long long i) { return sx_bf16_to_f32(p[i]); }
__device__ __forceinline__ void sx_store(float* p, long long i, float v) { p[i] = v; }
__device__ __forceinline__ void sx_store(sx_bf16* p, long long i, float v) { p[i] = sx_f32_to_bf16(v); }

__device__ __forceinline__ float sx_neg_inf() { return __int_as_float(0xff800000); }
__device__ __forceinline__ float sx_nan() { return __int_as_float(0x7fc00000); }
// The larger of a and b, a on ties and when b is NaN (ref's `b > a ? b : a`).
__device__ __forceinline__ float sx_max(float a, float b) { return b > a ? b : a; }

#define SX_GELU_C 0.7978845608028654f
#define SX_GELU_A 0.044715f
#define SX_GELU_3A 0.134145f
__device__ __forceinline__ float sx_gelu(float x) {
  return 0.5f * x * (1.0f + tanhf(SX_GELU_C * (x + SX_GELU_A * x * x * x)));
}
__device__ __forceinline__ float sx_gelu_grad(float x) {
  float t = tanhf(SX_GELU_C * (x + SX_GELU_A * x * x * x));
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * SX_GELU_C * (1.0f + SX_GELU_3A * x * x);
}
__device__ __forceinline__ float sx_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// Float to int as the reference casts: toward zero, saturating, NaN to 0.
__device__ __forceinline__ int sx_to_int(double v) {
  if (v != v) return 0;
  if (v >= 2147483647.0) return 2147483647;
  if (v <= -2147483648.0) return (int)(-2147483647 - 1);
  return (int)v;
}
__device__ __forceinline__ bool sx_isinf(float x) { return x == sx_neg_inf() || x == -sx_neg_inf(); }

// Philox-4x32-10 as graph/philox.h: word e % 4 of the block for counter
// (e / 4, stream, offset), key seed; dropout keeps when uniform >= p.
__device__ __forceinline__ unsigned sx_philox_bits(unsigned long long seed, unsigned stream,
                                                   unsigned long long offset, unsigned long long e) {
  unsigned c0 = (unsigned)(e / 4), c1 = stream, c2 = (unsigned)offset, c3 = (unsigned)(offset >> 32);
  unsigned k0 = (unsigned)seed, k1 = (unsigned)(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    unsigned long long p0 = 0xD2511F53ull * c0, p1 = 0xCD9E8D57ull * c2;
    unsigned n0 = (unsigned)(p1 >> 32) ^ c1 ^ k0, n1 = (unsigned)p1, n2 = (unsigned)(p0 >> 32) ^ c3 ^ k1,
             n3 = (unsigned)p0;
    c0 = n0;
    c1 = n1;
    c2 = n2;
    c3 = n3;
  }
  unsigned w = (unsigned)(e % 4);
  return w == 0 ? c0 : w == 1 ? c1 : w == 2 ? c2 : c3;
}
__device__ __forceinline__ bool sx_keep(unsigned long long seed, unsigned stream, unsigned long long offset,
                                        unsigned long long e, double p) {
  return (double)((float)(sx_philox_bits(seed, stream, offset, e) >> 8) * 5.9604644775390625e-08f) >= p;
}

// Warp reductions: a butterfly, the same bits in every lane.
__device__ __forceinline__ float sx_warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float sx_warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = sx_max(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Block reductions over a 1-D block of BLOCK threads (a multiple of 32):
// every thread returns the same bits. The first barrier lets a previous
// call's readers finish before `partial` is written again.
template <int BLOCK>
__device__ float sx_block_sum(float v) {
  __shared__ float partial[BLOCK / 32];
  v = sx_warp_sum(v);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = v;
  __syncthreads();
  float t = (threadIdx.x & 31) < BLOCK / 32 ? partial[threadIdx.x & 31] : 0.0f;
  return sx_warp_sum(t);
}
template <int BLOCK>
__device__ float sx_block_max(float v) {
  __shared__ float partial[BLOCK / 32];
  v = sx_warp_max(v);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = v;
  __syncthreads();
  float t = (threadIdx.x & 31) < BLOCK / 32 ? partial[threadIdx.x & 31] : sx_neg_inf();
  return sx_warp_max(t);
}
)CUDA";
}

}  // namespace sx::cuda::codegen
