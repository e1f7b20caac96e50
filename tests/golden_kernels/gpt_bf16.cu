// sexpgpu prelude: no includes
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

// 256 units [2,8,16], each one thread's
extern "C" __global__ void gather_embed_2fe161e5(const float* __restrict__ b0, const int* __restrict__ b1, const float* __restrict__ b2, float* __restrict__ b3) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 256LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u2 = unit % 16LL;
    long long u1 = (unit / 16LL) % 8LL;
    long long u0 = ((unit / 16LL) / 8LL) % 2LL;
    int v0 = b1[0LL + u0 * 8LL + u1 * 1LL];
    float v1 = (v0 >= 0 && v0 < 32LL) ? b0[0LL + u2 * 1LL + (long long)v0 * 16LL] : sx_nan();
    float v2 = b2[0LL + u1 * 16LL + u2 * 1LL];
    float v3 = v1 + v2;
    b3[0LL + u0 * 128LL + u1 * 16LL + u2 * 1LL] = v3;
  }
}

// 16 units [2,8,1], each one thread's
extern "C" __global__ void row_layer_norm_3bbd5979(const float* __restrict__ b0, const float* __restrict__ b1, const float* __restrict__ b2, sx_bf16* __restrict__ b3) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 16LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u1 = unit % 8LL;
    long long u0 = (unit / 8LL) % 2LL;
    float v1 = 0.0f;
    for (long long i2 = 0; i2 < 16LL; ++i2) {
      float v3 = b0[0LL + u0 * 128LL + u1 * 16LL + i2 * 1LL];
      v1 += v3;
    }
    v1 = v1 / (float)16LL;
    float v4 = 0.0f;
    for (long long i5 = 0; i5 < 16LL; ++i5) {
      float v6 = b0[0LL + u0 * 128LL + u1 * 16LL + i5 * 1LL];
      v4 += (v6 - v1) * (v6 - v1);
    }
    float v7 = 1.0f / sqrtf(v4 / (float)16LL + 9.999999747e-06f);
    for (long long i0 = 0; i0 < 16LL; ++i0) {
      float v8 = b0[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL];
      float v9 = b1[0LL + i0 * 1LL];
      float v10 = b2[0LL + i0 * 1LL];
      float v11 = (v8 - v1) * v7 * v9 + v10;
      float v12 = sx_round_bf16(v11);
      b3[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL] = sx_f32_to_bf16(v12);
    }
  }
}

// 256 units [2,2,8,8], each one thread's
extern "C" __global__ void attention_attention_71b90d07(const sx_bf16* __restrict__ b0, const sx_bf16* __restrict__ b1, const sx_bf16* __restrict__ b2, sx_bf16* __restrict__ b3, sx_bf16* __restrict__ b4, sx_bf16* __restrict__ b5, float* __restrict__ b6, sx_bf16* __restrict__ b7) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 256LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u3 = unit % 8LL;
    long long u2 = (unit / 8LL) % 8LL;
    long long u1 = ((unit / 8LL) / 8LL) % 2LL;
    long long u0 = (((unit / 8LL) / 8LL) / 2LL) % 2LL;
    float v0 = sx_bf16_to_f32(b0[0LL + u0 * 128LL + u1 * 8LL + u2 * 16LL + u3 * 1LL]);
    float v1 = sx_round_bf16(v0);
    b3[0LL + u0 * 128LL + u1 * 64LL + u2 * 8LL + u3 * 1LL] = sx_f32_to_bf16(v1);
    float v2 = sx_bf16_to_f32(b1[0LL + u0 * 128LL + u1 * 8LL + u2 * 16LL + u3 * 1LL]);
    float v3 = sx_round_bf16(v2);
    b4[0LL + u0 * 128LL + u1 * 64LL + u2 * 8LL + u3 * 1LL] = sx_f32_to_bf16(v3);
    float v4 = sx_bf16_to_f32(b2[0LL + u0 * 128LL + u1 * 8LL + u2 * 16LL + u3 * 1LL]);
    float v5 = sx_round_bf16(v4);
    b5[0LL + u0 * 128LL + u1 * 64LL + u2 * 8LL + u3 * 1LL] = sx_f32_to_bf16(v5);
    float v6 = sx_neg_inf();
    float v7 = 0.0f;
    for (long long i8 = 0; i8 < 8LL; ++i8) {
      float v9 = 0.0f;
      for (long long i10 = 0; i10 < 8LL; ++i10) {
        float v11 = sx_bf16_to_f32(b0[0LL + u0 * 128LL + u1 * 8LL + u2 * 16LL + i10 * 1LL]);
        float v12 = sx_round_bf16(v11);
        float v13 = sx_bf16_to_f32(b1[0LL + u0 * 128LL + u1 * 8LL + i8 * 16LL + i10 * 1LL]);
        float v14 = sx_round_bf16(v13);
        v9 += v12 * v14;
      }
      float v15 = i8 > u2 + 0LL ? sx_neg_inf() : v9 * 3.535533845e-01f;
      v6 = v15 > v6 ? v15 : v6;
    }
    for (long long i16 = 0; i16 < 8LL; ++i16) {
      float v17 = 0.0f;
      for (long long i18 = 0; i18 < 8LL; ++i18) {
        float v19 = sx_bf16_to_f32(b0[0LL + u0 * 128LL + u1 * 8LL + u2 * 16LL + i18 * 1LL]);
        float v20 = sx_round_bf16(v19);
        float v21 = sx_bf16_to_f32(b1[0LL + u0 * 128LL + u1 * 8LL + i16 * 16LL + i18 * 1LL]);
        float v22 = sx_round_bf16(v21);
        v17 += v20 * v22;
      }
      float v23 = i16 > u2 + 0LL ? sx_neg_inf() : v17 * 3.535533845e-01f;
      v7 += expf(v23 - v6);
    }
    float v24 = 0.0f;
    for (long long i25 = 0; i25 < 8LL; ++i25) {
      float v26 = 0.0f;
      for (long long i27 = 0; i27 < 8LL; ++i27) {
        float v28 = sx_bf16_to_f32(b0[0LL + u0 * 128LL + u1 * 8LL + u2 * 16LL + i27 * 1LL]);
        float v29 = sx_round_bf16(v28);
        float v30 = sx_bf16_to_f32(b1[0LL + u0 * 128LL + u1 * 8LL + i25 * 16LL + i27 * 1LL]);
        float v31 = sx_round_bf16(v30);
        v26 += v29 * v31;
      }
      float v32 = i25 > u2 + 0LL ? sx_neg_inf() : v26 * 3.535533845e-01f;
      float v33 = expf(v32 - v6) / v7;
      float v34 = sx_bf16_to_f32(b2[0LL + u0 * 128LL + u1 * 8LL + i25 * 16LL + u3 * 1LL]);
      float v35 = sx_round_bf16(v34);
      v24 += v33 * v35;
    }
    float v36 = sx_round_bf16(v24);
    b6[0LL + u0 * 128LL + u1 * 8LL + u2 * 16LL + u3 * 1LL] = v36;
    float v37 = sx_round_bf16(v36);
    b7[0LL + u0 * 128LL + u1 * 8LL + u2 * 16LL + u3 * 1LL] = sx_f32_to_bf16(v37);
  }
}

// 16 units [2,8,1], each one thread's
extern "C" __global__ void row_layer_norm_e53fe8e7(const float* __restrict__ b0, const sx_bf16* __restrict__ b1, float* __restrict__ b2, const float* __restrict__ b3, const float* __restrict__ b4, sx_bf16* __restrict__ b5) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 16LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u1 = unit % 8LL;
    long long u0 = (unit / 8LL) % 2LL;
    for (long long i0 = 0; i0 < 16LL; ++i0) {
      float v1 = b0[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL];
      float v2 = sx_bf16_to_f32(b1[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL]);
      float v3 = v1 + v2;
      b2[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL] = v3;
    }
    float v5 = 0.0f;
    for (long long i6 = 0; i6 < 16LL; ++i6) {
      float v7 = b0[0LL + u0 * 128LL + u1 * 16LL + i6 * 1LL];
      float v8 = sx_bf16_to_f32(b1[0LL + u0 * 128LL + u1 * 16LL + i6 * 1LL]);
      float v9 = v7 + v8;
      v5 += v9;
    }
    v5 = v5 / (float)16LL;
    float v10 = 0.0f;
    for (long long i11 = 0; i11 < 16LL; ++i11) {
      float v12 = b0[0LL + u0 * 128LL + u1 * 16LL + i11 * 1LL];
      float v13 = sx_bf16_to_f32(b1[0LL + u0 * 128LL + u1 * 16LL + i11 * 1LL]);
      float v14 = v12 + v13;
      v10 += (v14 - v5) * (v14 - v5);
    }
    float v15 = 1.0f / sqrtf(v10 / (float)16LL + 9.999999747e-06f);
    for (long long i4 = 0; i4 < 16LL; ++i4) {
      float v16 = b0[0LL + u0 * 128LL + u1 * 16LL + i4 * 1LL];
      float v17 = sx_bf16_to_f32(b1[0LL + u0 * 128LL + u1 * 16LL + i4 * 1LL]);
      float v18 = v16 + v17;
      float v19 = b3[0LL + i4 * 1LL];
      float v20 = b4[0LL + i4 * 1LL];
      float v21 = (v18 - v5) * v15 * v19 + v20;
      float v22 = sx_round_bf16(v21);
      b5[0LL + u0 * 128LL + u1 * 16LL + i4 * 1LL] = sx_f32_to_bf16(v22);
    }
  }
}

// 1024 units [2,8,64], each one thread's
extern "C" __global__ void map_gelu_97394564(const sx_bf16* __restrict__ b0, sx_bf16* __restrict__ b1) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 1024LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u2 = unit % 64LL;
    long long u1 = (unit / 64LL) % 8LL;
    long long u0 = ((unit / 64LL) / 8LL) % 2LL;
    float v0 = sx_bf16_to_f32(b0[0LL + u0 * 512LL + u1 * 64LL + u2 * 1LL]);
    float v1 = sx_gelu(v0);
    float v2 = sx_round_bf16(v1);
    b1[0LL + u0 * 512LL + u1 * 64LL + u2 * 1LL] = sx_f32_to_bf16(v2);
  }
}

// 1 units [1,1,1], each one thread's
extern "C" __global__ void loss_cross_entropy_342ae5ae(const sx_bf16* __restrict__ b0, const int* __restrict__ b1, float* __restrict__ b2, sx_bf16* __restrict__ b3) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 1LL;
       unit += (long long)gridDim.x * blockDim.x) {
    float v0 = 0.0f;
    for (long long i1 = 0; i1 < 2LL; ++i1) {
      for (long long i2 = 0; i2 < 8LL; ++i2) {
        long long v3 = ((0LL * 2LL + i1) * 8LL + i2);
        long long v4 = v3 % 8LL;
        v3 = v3 / 8LL;
        long long v5 = v3 % 2LL;
        v3 = v3 / 2LL;
        int v6 = b1[0LL + v5 * 8LL + v4 * 1LL];
        float v7 = sx_neg_inf();
        long long v8 = 0;
        for (long long i9 = 0; i9 < 32LL; ++i9) {
          float v10 = sx_bf16_to_f32(b0[0LL + i1 * 256LL + i2 * 32LL + i9 * 1LL]);
          if (v10 > v7) { v7 = v10; v8 = i9; }
        }
        float v11 = 0.0f;
        for (long long i12 = 0; i12 < 32LL; ++i12) {
          float v13 = sx_bf16_to_f32(b0[0LL + i1 * 256LL + i2 * 32LL + i12 * 1LL]);
          v11 += expf(v13 - v7);
        }
        long long t14 = (v6 >= 0 && v6 < 32LL) ? (long long)v6 : 0LL;
        float v15 = sx_bf16_to_f32(b0[0LL + i1 * 256LL + i2 * 32LL + t14 * 1LL]);
        float v16 = (v6 >= 0 && v6 < 32LL) ? v7 + logf(v11) - v15 : sx_nan();
        v0 += v16;
      }
    }
    float v17 = (float)((double)v0 / (double)16);
    long long v18 = 0LL;
    b2[0LL] = v17;
    float v35 = 1.000000000e+00f;
    float v36 = 6.250000000e-02f;
    float v37 = v35 * v36;
    for (long long i19 = 0; i19 < 2LL; ++i19) {
      for (long long i20 = 0; i20 < 8LL; ++i20) {
        float v22 = sx_neg_inf();
        float v23 = 0.0f;
        for (long long i24 = 0; i24 < 32LL; ++i24) {
          float v25 = sx_bf16_to_f32(b0[0LL + i19 * 256LL + i20 * 32LL + i24 * 1LL]);
          v22 = v25 > v22 ? v25 : v22;
        }
        for (long long i26 = 0; i26 < 32LL; ++i26) {
          float v27 = sx_bf16_to_f32(b0[0LL + i19 * 256LL + i20 * 32LL + i26 * 1LL]);
          v23 += expf(v27 - v22);
        }
        for (long long i21 = 0; i21 < 32LL; ++i21) {
          float v28 = sx_bf16_to_f32(b0[0LL + i19 * 256LL + i20 * 32LL + i21 * 1LL]);
          float v29 = expf(v28 - v22) / v23;
          int v30 = (int)(0LL + i21 * 1LL);
          int v31 = b1[0LL + i19 * 8LL + i20 * 1LL];
          int v32 = (((double)v30 == (double)v31) ? 1 : 0);
          float v33 = (float)v32;
          float v34 = v29 - v33;
          float v38 = v34 * v37;
          float v39 = sx_round_bf16(v38);
          b3[0LL + i19 * 256LL + i20 * 32LL + i21 * 1LL] = sx_f32_to_bf16(v39);
        }
      }
    }
  }
}

// 16 units [2,8,1], each one thread's
extern "C" __global__ void row_mean_857272ea(const float* __restrict__ b0, const sx_bf16* __restrict__ b1, const float* __restrict__ b2, float* __restrict__ b3, float* __restrict__ b4, sx_bf16* __restrict__ b5) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 16LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u1 = unit % 8LL;
    long long u0 = (unit / 8LL) % 2LL;
    float v1 = 0.0f;
    float v4 = 0.0f;
    for (long long i5 = 0; i5 < 16LL; ++i5) {
      float v6 = b0[0LL + u0 * 128LL + u1 * 16LL + i5 * 1LL];
      v4 += v6;
    }
    float v7 = (float)((double)v4 / (double)16);
    for (long long i2 = 0; i2 < 16LL; ++i2) {
      float v3 = b0[0LL + u0 * 128LL + u1 * 16LL + i2 * 1LL];
      float v8 = v3 - v7;
      float v9 = v8 * v8;
      v1 += v9;
    }
    float v10 = (float)((double)v1 / (double)16);
    float v11 = 9.999999747e-06f;
    float v12 = v10 + v11;
    float v13 = 1.0f / sqrtf(v12);
    float v20 = 0.0f;
    for (long long i21 = 0; i21 < 16LL; ++i21) {
      float v22 = sx_bf16_to_f32(b1[0LL + u0 * 128LL + u1 * 16LL + i21 * 1LL]);
      float v23 = b2[0LL + i21 * 1LL];
      float v24 = v22 * v23;
      float v25 = b0[0LL + u0 * 128LL + u1 * 16LL + i21 * 1LL];
      float v26 = v25 - v7;
      float v27 = v26 * v13;
      float v28 = v24 * v27;
      v20 += v28;
    }
    float v29 = (float)((double)v20 / (double)16);
    float v32 = 0.0f;
    for (long long i33 = 0; i33 < 16LL; ++i33) {
      float v34 = sx_bf16_to_f32(b1[0LL + u0 * 128LL + u1 * 16LL + i33 * 1LL]);
      float v35 = b2[0LL + i33 * 1LL];
      float v36 = v34 * v35;
      v32 += v36;
    }
    float v37 = (float)((double)v32 / (double)16);
    for (long long i0 = 0; i0 < 16LL; ++i0) {
      float v14 = sx_bf16_to_f32(b1[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL]);
      float v15 = b2[0LL + i0 * 1LL];
      float v16 = v14 * v15;
      float v17 = b0[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL];
      float v18 = v17 - v7;
      float v19 = v18 * v13;
      float v30 = v19 * v29;
      float v31 = v16 - v30;
      float v38 = v31 - v37;
      float v39 = v13 * v38;
      b3[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL] = v39;
    }
    for (long long i40 = 0; i40 < 16LL; ++i40) {
      float v41 = sx_bf16_to_f32(b1[0LL + u0 * 128LL + u1 * 16LL + i40 * 1LL]);
      float v42 = b0[0LL + u0 * 128LL + u1 * 16LL + i40 * 1LL];
      float v43 = v42 - v7;
      float v44 = v43 * v13;
      float v45 = v41 * v44;
      b4[0LL + u0 * 128LL + u1 * 16LL + i40 * 1LL] = v45;
    }
    for (long long i46 = 0; i46 < 16LL; ++i46) {
      float v47 = sx_bf16_to_f32(b1[0LL + u0 * 128LL + u1 * 16LL + i46 * 1LL]);
      float v48 = b2[0LL + i46 * 1LL];
      float v49 = v47 * v48;
      float v50 = b0[0LL + u0 * 128LL + u1 * 16LL + i46 * 1LL];
      float v51 = v50 - v7;
      float v52 = v51 * v13;
      float v53 = v52 * v29;
      float v54 = v49 - v53;
      float v55 = v54 - v37;
      float v56 = v13 * v55;
      float v57 = sx_round_bf16(v56);
      b5[0LL + u0 * 128LL + u1 * 16LL + i46 * 1LL] = sx_f32_to_bf16(v57);
    }
  }
}

// 16 units [1,1,16], each one thread's
extern "C" __global__ void column_sum_to_d960b6c3(const float* __restrict__ b0, float* __restrict__ b1, const sx_bf16* __restrict__ b2, float* __restrict__ b3, const sx_bf16* __restrict__ b4, float* __restrict__ b5) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 16LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u2 = unit % 16LL;
    float v0 = 0.0f;
    for (long long i1 = 0; i1 < 2LL; ++i1) {
      for (long long i2 = 0; i2 < 8LL; ++i2) {
        float v3 = b0[0LL + i1 * 128LL + i2 * 16LL + u2 * 1LL];
        v0 += v3;
      }
    }
    long long v4 = (0LL * 16LL + u2);
    long long v5 = v4 % 16LL;
    v4 = v4 / 16LL;
    b1[0LL + v5 * 1LL] = v0;
    float v6 = 0.0f;
    for (long long i7 = 0; i7 < 2LL; ++i7) {
      for (long long i8 = 0; i8 < 8LL; ++i8) {
        float v9 = sx_bf16_to_f32(b2[0LL + i7 * 128LL + i8 * 16LL + u2 * 1LL]);
        v6 += v9;
      }
    }
    long long v10 = (0LL * 16LL + u2);
    long long v11 = v10 % 16LL;
    v10 = v10 / 16LL;
    b3[0LL + v11 * 1LL] = v6;
    float v12 = 0.0f;
    for (long long i13 = 0; i13 < 2LL; ++i13) {
      for (long long i14 = 0; i14 < 8LL; ++i14) {
        float v15 = sx_bf16_to_f32(b4[0LL + i13 * 128LL + i14 * 16LL + u2 * 1LL]);
        v12 += v15;
      }
    }
    long long v16 = (0LL * 16LL + u2);
    long long v17 = v16 % 16LL;
    v16 = v16 / 16LL;
    b5[0LL + v17 * 1LL] = v12;
  }
}

// 64 units [1,1,64], each one thread's
extern "C" __global__ void column_sum_to_78ba1331(const sx_bf16* __restrict__ b0, const sx_bf16* __restrict__ b1, sx_bf16* __restrict__ b2, float* __restrict__ b3) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 64LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u2 = unit % 64LL;
    for (long long i0 = 0; i0 < 2LL; ++i0) {
      for (long long i1 = 0; i1 < 8LL; ++i1) {
        float v2 = sx_bf16_to_f32(b1[0LL + i0 * 512LL + i1 * 64LL + u2 * 1LL]);
        float v3 = sx_bf16_to_f32(b0[0LL + i0 * 512LL + i1 * 64LL + u2 * 1LL]);
        float v4 = sx_gelu_grad(v3);
        float v5 = v2 * v4;
        float v6 = sx_round_bf16(v5);
        b2[0LL + i0 * 512LL + i1 * 64LL + u2 * 1LL] = sx_f32_to_bf16(v6);
      }
    }
    float v7 = 0.0f;
    for (long long i8 = 0; i8 < 2LL; ++i8) {
      for (long long i9 = 0; i9 < 8LL; ++i9) {
        float v10 = sx_bf16_to_f32(b1[0LL + i8 * 512LL + i9 * 64LL + u2 * 1LL]);
        float v11 = sx_bf16_to_f32(b0[0LL + i8 * 512LL + i9 * 64LL + u2 * 1LL]);
        float v12 = sx_gelu_grad(v11);
        float v13 = v10 * v12;
        float v14 = sx_round_bf16(v13);
        v7 += v14;
      }
    }
    long long v15 = (0LL * 64LL + u2);
    long long v16 = v15 % 64LL;
    v15 = v15 / 64LL;
    b3[0LL + v16 * 1LL] = v7;
  }
}

// 16 units [2,8,1], each one thread's
extern "C" __global__ void row_mean_1f2c27f0(const float* __restrict__ b0, const sx_bf16* __restrict__ b1, const float* __restrict__ b2, float* __restrict__ b3, float* __restrict__ b4) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 16LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u1 = unit % 8LL;
    long long u0 = (unit / 8LL) % 2LL;
    float v1 = 0.0f;
    float v4 = 0.0f;
    for (long long i5 = 0; i5 < 16LL; ++i5) {
      float v6 = b0[0LL + u0 * 128LL + u1 * 16LL + i5 * 1LL];
      v4 += v6;
    }
    float v7 = (float)((double)v4 / (double)16);
    for (long long i2 = 0; i2 < 16LL; ++i2) {
      float v3 = b0[0LL + u0 * 128LL + u1 * 16LL + i2 * 1LL];
      float v8 = v3 - v7;
      float v9 = v8 * v8;
      v1 += v9;
    }
    float v10 = (float)((double)v1 / (double)16);
    float v11 = 9.999999747e-06f;
    float v12 = v10 + v11;
    float v13 = 1.0f / sqrtf(v12);
    float v20 = 0.0f;
    for (long long i21 = 0; i21 < 16LL; ++i21) {
      float v22 = sx_bf16_to_f32(b1[0LL + u0 * 128LL + u1 * 16LL + i21 * 1LL]);
      float v23 = b2[0LL + i21 * 1LL];
      float v24 = v22 * v23;
      float v25 = b0[0LL + u0 * 128LL + u1 * 16LL + i21 * 1LL];
      float v26 = v25 - v7;
      float v27 = v26 * v13;
      float v28 = v24 * v27;
      v20 += v28;
    }
    float v29 = (float)((double)v20 / (double)16);
    float v32 = 0.0f;
    for (long long i33 = 0; i33 < 16LL; ++i33) {
      float v34 = sx_bf16_to_f32(b1[0LL + u0 * 128LL + u1 * 16LL + i33 * 1LL]);
      float v35 = b2[0LL + i33 * 1LL];
      float v36 = v34 * v35;
      v32 += v36;
    }
    float v37 = (float)((double)v32 / (double)16);
    for (long long i0 = 0; i0 < 16LL; ++i0) {
      float v14 = sx_bf16_to_f32(b1[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL]);
      float v15 = b2[0LL + i0 * 1LL];
      float v16 = v14 * v15;
      float v17 = b0[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL];
      float v18 = v17 - v7;
      float v19 = v18 * v13;
      float v30 = v19 * v29;
      float v31 = v16 - v30;
      float v38 = v31 - v37;
      float v39 = v13 * v38;
      b3[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL] = v39;
    }
    for (long long i40 = 0; i40 < 16LL; ++i40) {
      float v41 = sx_bf16_to_f32(b1[0LL + u0 * 128LL + u1 * 16LL + i40 * 1LL]);
      float v42 = b0[0LL + u0 * 128LL + u1 * 16LL + i40 * 1LL];
      float v43 = v42 - v7;
      float v44 = v43 * v13;
      float v45 = v41 * v44;
      b4[0LL + u0 * 128LL + u1 * 16LL + i40 * 1LL] = v45;
    }
  }
}

// 16 units [1,1,16], each one thread's
extern "C" __global__ void column_sum_to_2a228e68(const float* __restrict__ b0, float* __restrict__ b1, const sx_bf16* __restrict__ b2, float* __restrict__ b3, const float* __restrict__ b4, const float* __restrict__ b5, float* __restrict__ b6, sx_bf16* __restrict__ b7, float* __restrict__ b8) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 16LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u2 = unit % 16LL;
    float v0 = 0.0f;
    for (long long i1 = 0; i1 < 2LL; ++i1) {
      for (long long i2 = 0; i2 < 8LL; ++i2) {
        float v3 = b0[0LL + i1 * 128LL + i2 * 16LL + u2 * 1LL];
        v0 += v3;
      }
    }
    long long v4 = (0LL * 16LL + u2);
    long long v5 = v4 % 16LL;
    v4 = v4 / 16LL;
    b1[0LL + v5 * 1LL] = v0;
    float v6 = 0.0f;
    for (long long i7 = 0; i7 < 2LL; ++i7) {
      for (long long i8 = 0; i8 < 8LL; ++i8) {
        float v9 = sx_bf16_to_f32(b2[0LL + i7 * 128LL + i8 * 16LL + u2 * 1LL]);
        v6 += v9;
      }
    }
    long long v10 = (0LL * 16LL + u2);
    long long v11 = v10 % 16LL;
    v10 = v10 / 16LL;
    b3[0LL + v11 * 1LL] = v6;
    for (long long i12 = 0; i12 < 2LL; ++i12) {
      for (long long i13 = 0; i13 < 8LL; ++i13) {
        float v14 = b4[0LL + i12 * 128LL + i13 * 16LL + u2 * 1LL];
        float v15 = b5[0LL + i12 * 128LL + i13 * 16LL + u2 * 1LL];
        float v16 = v14 + v15;
        b6[0LL + i12 * 128LL + i13 * 16LL + u2 * 1LL] = v16;
      }
    }
    for (long long i17 = 0; i17 < 2LL; ++i17) {
      for (long long i18 = 0; i18 < 8LL; ++i18) {
        float v19 = b4[0LL + i17 * 128LL + i18 * 16LL + u2 * 1LL];
        float v20 = b5[0LL + i17 * 128LL + i18 * 16LL + u2 * 1LL];
        float v21 = v19 + v20;
        float v22 = sx_round_bf16(v21);
        b7[0LL + i17 * 128LL + i18 * 16LL + u2 * 1LL] = sx_f32_to_bf16(v22);
      }
    }
    float v23 = 0.0f;
    for (long long i24 = 0; i24 < 2LL; ++i24) {
      for (long long i25 = 0; i25 < 8LL; ++i25) {
        float v26 = b4[0LL + i24 * 128LL + i25 * 16LL + u2 * 1LL];
        float v27 = b5[0LL + i24 * 128LL + i25 * 16LL + u2 * 1LL];
        float v28 = v26 + v27;
        float v29 = sx_round_bf16(v28);
        v23 += v29;
      }
    }
    long long v30 = (0LL * 16LL + u2);
    long long v31 = v30 % 16LL;
    v30 = v30 / 16LL;
    b8[0LL + v31 * 1LL] = v23;
  }
}

// 256 units [2,2,8,8], each one thread's
extern "C" __global__ void map_permute_e1ca81c6(const sx_bf16* __restrict__ b0, sx_bf16* __restrict__ b1) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 256LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u3 = unit % 8LL;
    long long u2 = (unit / 8LL) % 8LL;
    long long u1 = ((unit / 8LL) / 8LL) % 2LL;
    long long u0 = (((unit / 8LL) / 8LL) / 2LL) % 2LL;
    float v0 = sx_bf16_to_f32(b0[0LL + u0 * 128LL + u1 * 8LL + u2 * 16LL + u3 * 1LL]);
    float v1 = sx_round_bf16(v0);
    b1[0LL + u0 * 128LL + u1 * 64LL + u2 * 8LL + u3 * 1LL] = sx_f32_to_bf16(v1);
  }
}

// 32 units [2,2,8,1], each one thread's
extern "C" __global__ void row_softmax_d43b242e(const float* __restrict__ b0, float* __restrict__ b1) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 32LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u2 = unit % 8LL;
    long long u1 = (unit / 8LL) % 2LL;
    long long u0 = ((unit / 8LL) / 2LL) % 2LL;
    float v1 = sx_neg_inf();
    float v2 = 0.0f;
    int v6 = sx_to_int(0);
    float v10 = 3.535533845e-01f;
    float v12 = sx_neg_inf();
    for (long long i3 = 0; i3 < 8LL; ++i3) {
      int v4 = (int)(0LL + i3 * 1LL);
      int v5 = (int)(0LL + u2 * 1LL);
      int v7 = (int)((long long)v5 + (long long)v6);
      int v8 = (((double)v4 <= (double)v7) ? 1 : 0);
      float v9 = b0[0LL + u0 * 128LL + u1 * 64LL + u2 * 8LL + i3 * 1LL];
      float v11 = v9 * v10;
      float v13 = v8 != 0 ? v11 : v12;
      v1 = v13 > v1 ? v13 : v1;
    }
    for (long long i14 = 0; i14 < 8LL; ++i14) {
      int v15 = (int)(0LL + i14 * 1LL);
      int v16 = (int)(0LL + u2 * 1LL);
      int v17 = (int)((long long)v16 + (long long)v6);
      int v18 = (((double)v15 <= (double)v17) ? 1 : 0);
      float v19 = b0[0LL + u0 * 128LL + u1 * 64LL + u2 * 8LL + i14 * 1LL];
      float v20 = v19 * v10;
      float v21 = v18 != 0 ? v20 : v12;
      v2 += expf(v21 - v1);
    }
    for (long long i0 = 0; i0 < 8LL; ++i0) {
      int v22 = (int)(0LL + i0 * 1LL);
      int v23 = (int)(0LL + u2 * 1LL);
      int v24 = (int)((long long)v23 + (long long)v6);
      int v25 = (((double)v22 <= (double)v24) ? 1 : 0);
      float v26 = b0[0LL + u0 * 128LL + u1 * 64LL + u2 * 8LL + i0 * 1LL];
      float v27 = v26 * v10;
      float v28 = v25 != 0 ? v27 : v12;
      float v29 = expf(v28 - v1) / v2;
      b1[0LL + u0 * 128LL + u1 * 64LL + u2 * 8LL + i0 * 1LL] = v29;
    }
  }
}

// 32 units [2,2,8,1], each one thread's
extern "C" __global__ void row_sum_be5d579f(const float* __restrict__ b0, const float* __restrict__ b1, float* __restrict__ b2) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 32LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u2 = unit % 8LL;
    long long u1 = (unit / 8LL) % 2LL;
    long long u0 = ((unit / 8LL) / 2LL) % 2LL;
    float v3 = 0.0f;
    for (long long i4 = 0; i4 < 8LL; ++i4) {
      float v5 = b0[0LL + u0 * 128LL + u1 * 64LL + u2 * 8LL + i4 * 1LL];
      float v6 = b1[0LL + u0 * 128LL + u1 * 64LL + u2 * 8LL + i4 * 1LL];
      float v7 = v5 * v6;
      v3 += v7;
    }
    float v10 = 3.535533845e-01f;
    for (long long i0 = 0; i0 < 8LL; ++i0) {
      float v1 = b1[0LL + u0 * 128LL + u1 * 64LL + u2 * 8LL + i0 * 1LL];
      float v2 = b0[0LL + u0 * 128LL + u1 * 64LL + u2 * 8LL + i0 * 1LL];
      float v8 = v2 - v3;
      float v9 = v1 * v8;
      float v11 = v9 * v10;
      b2[0LL + u0 * 128LL + u1 * 64LL + u2 * 8LL + i0 * 1LL] = v11;
    }
  }
}

// 16 units [1,1,16], each one thread's
extern "C" __global__ void column_permute_123cf521(const sx_bf16* __restrict__ b0, float* __restrict__ b1, sx_bf16* __restrict__ b2, float* __restrict__ b3, const sx_bf16* __restrict__ b4, float* __restrict__ b5, sx_bf16* __restrict__ b6, float* __restrict__ b7, const sx_bf16* __restrict__ b8, float* __restrict__ b9, sx_bf16* __restrict__ b10, float* __restrict__ b11) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 16LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u2 = unit % 16LL;
    for (long long i0 = 0; i0 < 2LL; ++i0) {
      for (long long i1 = 0; i1 < 8LL; ++i1) {
        long long v2 = (((0LL * 2LL + i0) * 8LL + i1) * 16LL + u2);
        long long v3 = v2 % 8LL;
        v2 = v2 / 8LL;
        long long v4 = v2 % 2LL;
        v2 = v2 / 2LL;
        long long v5 = v2 % 8LL;
        v2 = v2 / 8LL;
        long long v6 = v2 % 2LL;
        v2 = v2 / 2LL;
        float v7 = sx_bf16_to_f32(b0[0LL + v6 * 128LL + v5 * 8LL + v4 * 64LL + v3 * 1LL]);
        long long v8 = (((0LL * 2LL + i0) * 8LL + i1) * 16LL + u2);
        long long v9 = v8 % 8LL;
        v8 = v8 / 8LL;
        long long v10 = v8 % 2LL;
        v8 = v8 / 2LL;
        long long v11 = v8 % 8LL;
        v8 = v8 / 8LL;
        long long v12 = v8 % 2LL;
        v8 = v8 / 2LL;
        b1[0LL + v12 * 128LL + v11 * 16LL + v10 * 8LL + v9 * 1LL] = v7;
      }
    }
    for (long long i13 = 0; i13 < 2LL; ++i13) {
      for (long long i14 = 0; i14 < 8LL; ++i14) {
        long long v15 = (((0LL * 2LL + i13) * 8LL + i14) * 16LL + u2);
        long long v16 = v15 % 8LL;
        v15 = v15 / 8LL;
        long long v17 = v15 % 2LL;
        v15 = v15 / 2LL;
        long long v18 = v15 % 8LL;
        v15 = v15 / 8LL;
        long long v19 = v15 % 2LL;
        v15 = v15 / 2LL;
        float v20 = sx_bf16_to_f32(b0[0LL + v19 * 128LL + v18 * 8LL + v17 * 64LL + v16 * 1LL]);
        float v21 = sx_round_bf16(v20);
        b2[0LL + i13 * 128LL + i14 * 16LL + u2 * 1LL] = sx_f32_to_bf16(v21);
      }
    }
    float v22 = 0.0f;
    for (long long i23 = 0; i23 < 2LL; ++i23) {
      for (long long i24 = 0; i24 < 8LL; ++i24) {
        long long v25 = (((0LL * 2LL + i23) * 8LL + i24) * 16LL + u2);
        long long v26 = v25 % 8LL;
        v25 = v25 / 8LL;
        long long v27 = v25 % 2LL;
        v25 = v25 / 2LL;
        long long v28 = v25 % 8LL;
        v25 = v25 / 8LL;
        long long v29 = v25 % 2LL;
        v25 = v25 / 2LL;
        float v30 = sx_bf16_to_f32(b0[0LL + v29 * 128LL + v28 * 8LL + v27 * 64LL + v26 * 1LL]);
        float v31 = sx_round_bf16(v30);
        v22 += v31;
      }
    }
    long long v32 = (0LL * 16LL + u2);
    long long v33 = v32 % 16LL;
    v32 = v32 / 16LL;
    b3[0LL + v33 * 1LL] = v22;
    for (long long i34 = 0; i34 < 2LL; ++i34) {
      for (long long i35 = 0; i35 < 8LL; ++i35) {
        long long v36 = (((0LL * 2LL + i34) * 8LL + i35) * 16LL + u2);
        long long v37 = v36 % 8LL;
        v36 = v36 / 8LL;
        long long v38 = v36 % 2LL;
        v36 = v36 / 2LL;
        long long v39 = v36 % 8LL;
        v36 = v36 / 8LL;
        long long v40 = v36 % 2LL;
        v36 = v36 / 2LL;
        float v41 = sx_bf16_to_f32(b4[0LL + v40 * 128LL + v39 * 8LL + v38 * 64LL + v37 * 1LL]);
        long long v42 = (((0LL * 2LL + i34) * 8LL + i35) * 16LL + u2);
        long long v43 = v42 % 8LL;
        v42 = v42 / 8LL;
        long long v44 = v42 % 2LL;
        v42 = v42 / 2LL;
        long long v45 = v42 % 8LL;
        v42 = v42 / 8LL;
        long long v46 = v42 % 2LL;
        v42 = v42 / 2LL;
        b5[0LL + v46 * 128LL + v45 * 16LL + v44 * 8LL + v43 * 1LL] = v41;
      }
    }
    for (long long i47 = 0; i47 < 2LL; ++i47) {
      for (long long i48 = 0; i48 < 8LL; ++i48) {
        long long v49 = (((0LL * 2LL + i47) * 8LL + i48) * 16LL + u2);
        long long v50 = v49 % 8LL;
        v49 = v49 / 8LL;
        long long v51 = v49 % 2LL;
        v49 = v49 / 2LL;
        long long v52 = v49 % 8LL;
        v49 = v49 / 8LL;
        long long v53 = v49 % 2LL;
        v49 = v49 / 2LL;
        float v54 = sx_bf16_to_f32(b4[0LL + v53 * 128LL + v52 * 8LL + v51 * 64LL + v50 * 1LL]);
        float v55 = sx_round_bf16(v54);
        b6[0LL + i47 * 128LL + i48 * 16LL + u2 * 1LL] = sx_f32_to_bf16(v55);
      }
    }
    float v56 = 0.0f;
    for (long long i57 = 0; i57 < 2LL; ++i57) {
      for (long long i58 = 0; i58 < 8LL; ++i58) {
        long long v59 = (((0LL * 2LL + i57) * 8LL + i58) * 16LL + u2);
        long long v60 = v59 % 8LL;
        v59 = v59 / 8LL;
        long long v61 = v59 % 2LL;
        v59 = v59 / 2LL;
        long long v62 = v59 % 8LL;
        v59 = v59 / 8LL;
        long long v63 = v59 % 2LL;
        v59 = v59 / 2LL;
        float v64 = sx_bf16_to_f32(b4[0LL + v63 * 128LL + v62 * 8LL + v61 * 64LL + v60 * 1LL]);
        float v65 = sx_round_bf16(v64);
        v56 += v65;
      }
    }
    long long v66 = (0LL * 16LL + u2);
    long long v67 = v66 % 16LL;
    v66 = v66 / 16LL;
    b7[0LL + v67 * 1LL] = v56;
    for (long long i68 = 0; i68 < 2LL; ++i68) {
      for (long long i69 = 0; i69 < 8LL; ++i69) {
        long long v70 = (((0LL * 2LL + i68) * 8LL + i69) * 16LL + u2);
        long long v71 = v70 % 8LL;
        v70 = v70 / 8LL;
        long long v72 = v70 % 2LL;
        v70 = v70 / 2LL;
        long long v73 = v70 % 8LL;
        v70 = v70 / 8LL;
        long long v74 = v70 % 2LL;
        v70 = v70 / 2LL;
        float v75 = sx_bf16_to_f32(b8[0LL + v74 * 128LL + v73 * 8LL + v72 * 64LL + v71 * 1LL]);
        long long v76 = (((0LL * 2LL + i68) * 8LL + i69) * 16LL + u2);
        long long v77 = v76 % 8LL;
        v76 = v76 / 8LL;
        long long v78 = v76 % 2LL;
        v76 = v76 / 2LL;
        long long v79 = v76 % 8LL;
        v76 = v76 / 8LL;
        long long v80 = v76 % 2LL;
        v76 = v76 / 2LL;
        b9[0LL + v80 * 128LL + v79 * 16LL + v78 * 8LL + v77 * 1LL] = v75;
      }
    }
    for (long long i81 = 0; i81 < 2LL; ++i81) {
      for (long long i82 = 0; i82 < 8LL; ++i82) {
        long long v83 = (((0LL * 2LL + i81) * 8LL + i82) * 16LL + u2);
        long long v84 = v83 % 8LL;
        v83 = v83 / 8LL;
        long long v85 = v83 % 2LL;
        v83 = v83 / 2LL;
        long long v86 = v83 % 8LL;
        v83 = v83 / 8LL;
        long long v87 = v83 % 2LL;
        v83 = v83 / 2LL;
        float v88 = sx_bf16_to_f32(b8[0LL + v87 * 128LL + v86 * 8LL + v85 * 64LL + v84 * 1LL]);
        float v89 = sx_round_bf16(v88);
        b10[0LL + i81 * 128LL + i82 * 16LL + u2 * 1LL] = sx_f32_to_bf16(v89);
      }
    }
    float v90 = 0.0f;
    for (long long i91 = 0; i91 < 2LL; ++i91) {
      for (long long i92 = 0; i92 < 8LL; ++i92) {
        long long v93 = (((0LL * 2LL + i91) * 8LL + i92) * 16LL + u2);
        long long v94 = v93 % 8LL;
        v93 = v93 / 8LL;
        long long v95 = v93 % 2LL;
        v93 = v93 / 2LL;
        long long v96 = v93 % 8LL;
        v93 = v93 / 8LL;
        long long v97 = v93 % 2LL;
        v93 = v93 / 2LL;
        float v98 = sx_bf16_to_f32(b8[0LL + v97 * 128LL + v96 * 8LL + v95 * 64LL + v94 * 1LL]);
        float v99 = sx_round_bf16(v98);
        v90 += v99;
      }
    }
    long long v100 = (0LL * 16LL + u2);
    long long v101 = v100 % 16LL;
    v100 = v100 / 16LL;
    b11[0LL + v101 * 1LL] = v90;
  }
}

// 16 units [2,8,1], each one thread's
extern "C" __global__ void row_mean_76fcb6ba(const float* __restrict__ b0, const float* __restrict__ b1, const float* __restrict__ b2, sx_bf16* __restrict__ b3, const float* __restrict__ b4, const float* __restrict__ b5, float* __restrict__ b6, float* __restrict__ b7) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 16LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u1 = unit % 8LL;
    long long u0 = (unit / 8LL) % 2LL;
    for (long long i0 = 0; i0 < 16LL; ++i0) {
      float v1 = b0[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL];
      float v2 = b1[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL];
      float v3 = v1 + v2;
      float v4 = b2[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL];
      float v5 = v3 + v4;
      float v6 = sx_round_bf16(v5);
      b3[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL] = sx_f32_to_bf16(v6);
    }
    float v8 = 0.0f;
    float v11 = 0.0f;
    for (long long i12 = 0; i12 < 16LL; ++i12) {
      float v13 = b4[0LL + u0 * 128LL + u1 * 16LL + i12 * 1LL];
      v11 += v13;
    }
    float v14 = (float)((double)v11 / (double)16);
    for (long long i9 = 0; i9 < 16LL; ++i9) {
      float v10 = b4[0LL + u0 * 128LL + u1 * 16LL + i9 * 1LL];
      float v15 = v10 - v14;
      float v16 = v15 * v15;
      v8 += v16;
    }
    float v17 = (float)((double)v8 / (double)16);
    float v18 = 9.999999747e-06f;
    float v19 = v17 + v18;
    float v20 = 1.0f / sqrtf(v19);
    float v32 = 0.0f;
    for (long long i33 = 0; i33 < 16LL; ++i33) {
      float v34 = b0[0LL + u0 * 128LL + u1 * 16LL + i33 * 1LL];
      float v35 = b1[0LL + u0 * 128LL + u1 * 16LL + i33 * 1LL];
      float v36 = v34 + v35;
      float v37 = b2[0LL + u0 * 128LL + u1 * 16LL + i33 * 1LL];
      float v38 = v36 + v37;
      float v39 = sx_round_bf16(v38);
      float v40 = b5[0LL + i33 * 1LL];
      float v41 = v39 * v40;
      float v42 = b4[0LL + u0 * 128LL + u1 * 16LL + i33 * 1LL];
      float v43 = v42 - v14;
      float v44 = v43 * v20;
      float v45 = v41 * v44;
      v32 += v45;
    }
    float v46 = (float)((double)v32 / (double)16);
    float v49 = 0.0f;
    for (long long i50 = 0; i50 < 16LL; ++i50) {
      float v51 = b0[0LL + u0 * 128LL + u1 * 16LL + i50 * 1LL];
      float v52 = b1[0LL + u0 * 128LL + u1 * 16LL + i50 * 1LL];
      float v53 = v51 + v52;
      float v54 = b2[0LL + u0 * 128LL + u1 * 16LL + i50 * 1LL];
      float v55 = v53 + v54;
      float v56 = sx_round_bf16(v55);
      float v57 = b5[0LL + i50 * 1LL];
      float v58 = v56 * v57;
      v49 += v58;
    }
    float v59 = (float)((double)v49 / (double)16);
    for (long long i7 = 0; i7 < 16LL; ++i7) {
      float v21 = b0[0LL + u0 * 128LL + u1 * 16LL + i7 * 1LL];
      float v22 = b1[0LL + u0 * 128LL + u1 * 16LL + i7 * 1LL];
      float v23 = v21 + v22;
      float v24 = b2[0LL + u0 * 128LL + u1 * 16LL + i7 * 1LL];
      float v25 = v23 + v24;
      float v26 = sx_round_bf16(v25);
      float v27 = b5[0LL + i7 * 1LL];
      float v28 = v26 * v27;
      float v29 = b4[0LL + u0 * 128LL + u1 * 16LL + i7 * 1LL];
      float v30 = v29 - v14;
      float v31 = v30 * v20;
      float v47 = v31 * v46;
      float v48 = v28 - v47;
      float v60 = v48 - v59;
      float v61 = v20 * v60;
      b6[0LL + u0 * 128LL + u1 * 16LL + i7 * 1LL] = v61;
    }
    for (long long i62 = 0; i62 < 16LL; ++i62) {
      float v63 = b0[0LL + u0 * 128LL + u1 * 16LL + i62 * 1LL];
      float v64 = b1[0LL + u0 * 128LL + u1 * 16LL + i62 * 1LL];
      float v65 = v63 + v64;
      float v66 = b2[0LL + u0 * 128LL + u1 * 16LL + i62 * 1LL];
      float v67 = v65 + v66;
      float v68 = sx_round_bf16(v67);
      float v69 = b4[0LL + u0 * 128LL + u1 * 16LL + i62 * 1LL];
      float v70 = v69 - v14;
      float v71 = v70 * v20;
      float v72 = v68 * v71;
      b7[0LL + u0 * 128LL + u1 * 16LL + i62 * 1LL] = v72;
    }
  }
}

// 16 units [1,1,16], each one thread's
extern "C" __global__ void column_sum_to_ecbfd656(const float* __restrict__ b0, float* __restrict__ b1, const sx_bf16* __restrict__ b2, float* __restrict__ b3, const float* __restrict__ b4, const float* __restrict__ b5, float* __restrict__ b6, float* __restrict__ b7) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 16LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u2 = unit % 16LL;
    float v0 = 0.0f;
    for (long long i1 = 0; i1 < 2LL; ++i1) {
      for (long long i2 = 0; i2 < 8LL; ++i2) {
        float v3 = b0[0LL + i1 * 128LL + i2 * 16LL + u2 * 1LL];
        v0 += v3;
      }
    }
    long long v4 = (0LL * 16LL + u2);
    long long v5 = v4 % 16LL;
    v4 = v4 / 16LL;
    b1[0LL + v5 * 1LL] = v0;
    float v6 = 0.0f;
    for (long long i7 = 0; i7 < 2LL; ++i7) {
      for (long long i8 = 0; i8 < 8LL; ++i8) {
        float v9 = sx_bf16_to_f32(b2[0LL + i7 * 128LL + i8 * 16LL + u2 * 1LL]);
        v6 += v9;
      }
    }
    long long v10 = (0LL * 16LL + u2);
    long long v11 = v10 % 16LL;
    v10 = v10 / 16LL;
    b3[0LL + v11 * 1LL] = v6;
    for (long long i12 = 0; i12 < 2LL; ++i12) {
      for (long long i13 = 0; i13 < 8LL; ++i13) {
        float v14 = b4[0LL + i12 * 128LL + i13 * 16LL + u2 * 1LL];
        float v15 = b5[0LL + i12 * 128LL + i13 * 16LL + u2 * 1LL];
        float v16 = v14 + v15;
        b6[0LL + i12 * 128LL + i13 * 16LL + u2 * 1LL] = v16;
      }
    }
    for (long long i17 = 0; i17 < 8LL; ++i17) {
      float v18 = 0.0f;
      for (long long i19 = 0; i19 < 2LL; ++i19) {
        float v20 = b4[0LL + i19 * 128LL + i17 * 16LL + u2 * 1LL];
        float v21 = b5[0LL + i19 * 128LL + i17 * 16LL + u2 * 1LL];
        float v22 = v20 + v21;
        v18 += v22;
      }
      long long v23 = ((0LL * 8LL + i17) * 16LL + u2);
      long long v24 = v23 % 16LL;
      v23 = v23 / 16LL;
      long long v25 = v23 % 8LL;
      v23 = v23 / 8LL;
      b7[0LL + v25 * 16LL + v24 * 1LL] = v18;
    }
  }
}

// 1 units [1,1,1], each one thread's
extern "C" __global__ void scatter_scatter_add_672e807b(const float* __restrict__ b0, const int* __restrict__ b1, float* __restrict__ b2) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 1LL;
       unit += (long long)gridDim.x * blockDim.x) {
    for (long long i0 = 0; i0 < 512LL; ++i0) {
      b2[i0] = 0;
    }
    for (long long i1 = 0; i1 < 2LL; ++i1) {
      for (long long i2 = 0; i2 < 8LL; ++i2) {
        for (long long i3 = 0; i3 < 16LL; ++i3) {
          float v4 = b0[0LL + i1 * 128LL + i2 * 16LL + i3 * 1LL];
          int v5 = b1[0LL + i1 * 8LL + i2 * 1LL];
          if (v5 >= 0 && v5 < 32LL) {
            b2[0LL + i3 * 1LL + (long long)v5 * 16LL] += v4;
          }
        }
      }
    }
  }
}

extern "C" __global__ void optimizer_grad_norm(const float* __restrict__ b0, const float* __restrict__ b1, const float* __restrict__ b2, const float* __restrict__ b3, const float* __restrict__ b4, const float* __restrict__ b5, const float* __restrict__ b6, const float* __restrict__ b7, const float* __restrict__ b8, const float* __restrict__ b9, const float* __restrict__ b10, const float* __restrict__ b11, const float* __restrict__ b12, const float* __restrict__ b13, const float* __restrict__ b14, const float* __restrict__ b15, const float* __restrict__ b16, const float* __restrict__ b17, const float* __restrict__ b18, const float* __restrict__ b19, const float* __restrict__ b20, const float* __restrict__ b21, const float* __restrict__ b22, const float* __restrict__ b23, const float* __restrict__ b24, const float* __restrict__ b25, const float* __restrict__ b26, const float* __restrict__ b27, const float* __restrict__ b28, const float* __restrict__ b29, const float* __restrict__ b30, const float* __restrict__ b31, const float* __restrict__ b32, const float* __restrict__ b33, const float* __restrict__ b34, const float* __restrict__ b35, const float* __restrict__ b36, int* __restrict__ b37) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  double* norms = (double*)b37;
  double total_sq = 0.0;
  decltype(b0) g = b0;
  long long n = 0;
  for (int t = 0; t < 37; ++t) {
    switch (t) {
      case 0:  // blocks.0.attn.wk.b
        g = b0; n = 16LL; break;
      case 1:  // blocks.0.attn.wk.w
        g = b1; n = 256LL; break;
      case 2:  // blocks.0.attn.wo.b
        g = b2; n = 16LL; break;
      case 3:  // blocks.0.attn.wo.w
        g = b3; n = 256LL; break;
      case 4:  // blocks.0.attn.wq.b
        g = b4; n = 16LL; break;
      case 5:  // blocks.0.attn.wq.w
        g = b5; n = 256LL; break;
      case 6:  // blocks.0.attn.wv.b
        g = b6; n = 16LL; break;
      case 7:  // blocks.0.attn.wv.w
        g = b7; n = 256LL; break;
      case 8:  // blocks.0.ln1.b
        g = b8; n = 16LL; break;
      case 9:  // blocks.0.ln1.g
        g = b9; n = 16LL; break;
      case 10:  // blocks.0.ln2.b
        g = b10; n = 16LL; break;
      case 11:  // blocks.0.ln2.g
        g = b11; n = 16LL; break;
      case 12:  // blocks.0.mlp.fc.b
        g = b12; n = 64LL; break;
      case 13:  // blocks.0.mlp.fc.w
        g = b13; n = 1024LL; break;
      case 14:  // blocks.0.mlp.proj.b
        g = b14; n = 16LL; break;
      case 15:  // blocks.0.mlp.proj.w
        g = b15; n = 1024LL; break;
      case 16:  // blocks.1.attn.wk.b
        g = b16; n = 16LL; break;
      case 17:  // blocks.1.attn.wk.w
        g = b17; n = 256LL; break;
      case 18:  // blocks.1.attn.wo.b
        g = b18; n = 16LL; break;
      case 19:  // blocks.1.attn.wo.w
        g = b19; n = 256LL; break;
      case 20:  // blocks.1.attn.wq.b
        g = b20; n = 16LL; break;
      case 21:  // blocks.1.attn.wq.w
        g = b21; n = 256LL; break;
      case 22:  // blocks.1.attn.wv.b
        g = b22; n = 16LL; break;
      case 23:  // blocks.1.attn.wv.w
        g = b23; n = 256LL; break;
      case 24:  // blocks.1.ln1.b
        g = b24; n = 16LL; break;
      case 25:  // blocks.1.ln1.g
        g = b25; n = 16LL; break;
      case 26:  // blocks.1.ln2.b
        g = b26; n = 16LL; break;
      case 27:  // blocks.1.ln2.g
        g = b27; n = 16LL; break;
      case 28:  // blocks.1.mlp.fc.b
        g = b28; n = 64LL; break;
      case 29:  // blocks.1.mlp.fc.w
        g = b29; n = 1024LL; break;
      case 30:  // blocks.1.mlp.proj.b
        g = b30; n = 16LL; break;
      case 31:  // blocks.1.mlp.proj.w
        g = b31; n = 1024LL; break;
      case 32:  // embed.w
        g = b32; n = 512LL; break;
      case 33:  // head.w
        g = b33; n = 512LL; break;
      case 34:  // ln-f.b
        g = b34; n = 16LL; break;
      case 35:  // ln-f.g
        g = b35; n = 16LL; break;
      default:  // pos.w
        g = b36; n = 128LL; break;
    }
    double s = 0.0;
    for (long long i = 0; i < n; ++i) s += (double)g[i] * g[i];
    double norm = sqrt(s);
    total_sq += norm * norm;
    norms[t] = norm;
  }
  norms[37] = sqrt(total_sq);
}

extern "C" __global__ void optimizer_adamw(const float* __restrict__ b0, float* __restrict__ b1, float* __restrict__ b2, float* __restrict__ b3, sx_bf16* __restrict__ b4, const float* __restrict__ b5, float* __restrict__ b6, float* __restrict__ b7, float* __restrict__ b8, sx_bf16* __restrict__ b9, const float* __restrict__ b10, float* __restrict__ b11, float* __restrict__ b12, float* __restrict__ b13, sx_bf16* __restrict__ b14, const float* __restrict__ b15, float* __restrict__ b16, float* __restrict__ b17, float* __restrict__ b18, sx_bf16* __restrict__ b19, const float* __restrict__ b20, float* __restrict__ b21, float* __restrict__ b22, float* __restrict__ b23, sx_bf16* __restrict__ b24, const float* __restrict__ b25, float* __restrict__ b26, float* __restrict__ b27, float* __restrict__ b28, sx_bf16* __restrict__ b29, const float* __restrict__ b30, float* __restrict__ b31, float* __restrict__ b32, float* __restrict__ b33, sx_bf16* __restrict__ b34, const float* __restrict__ b35, float* __restrict__ b36, float* __restrict__ b37, float* __restrict__ b38, sx_bf16* __restrict__ b39, const float* __restrict__ b40, float* __restrict__ b41, float* __restrict__ b42, float* __restrict__ b43, sx_bf16* __restrict__ b44, const float* __restrict__ b45, float* __restrict__ b46, float* __restrict__ b47, float* __restrict__ b48, sx_bf16* __restrict__ b49, const float* __restrict__ b50, float* __restrict__ b51, float* __restrict__ b52, float* __restrict__ b53, sx_bf16* __restrict__ b54, const float* __restrict__ b55, float* __restrict__ b56, float* __restrict__ b57, float* __restrict__ b58, sx_bf16* __restrict__ b59, const float* __restrict__ b60, float* __restrict__ b61, float* __restrict__ b62, float* __restrict__ b63, sx_bf16* __restrict__ b64, const float* __restrict__ b65, float* __restrict__ b66, float* __restrict__ b67, float* __restrict__ b68, sx_bf16* __restrict__ b69, const float* __restrict__ b70, float* __restrict__ b71, float* __restrict__ b72, float* __restrict__ b73, sx_bf16* __restrict__ b74, const float* __restrict__ b75, float* __restrict__ b76, float* __restrict__ b77, float* __restrict__ b78, sx_bf16* __restrict__ b79, const float* __restrict__ b80, float* __restrict__ b81, float* __restrict__ b82, float* __restrict__ b83, sx_bf16* __restrict__ b84, const float* __restrict__ b85, float* __restrict__ b86, float* __restrict__ b87, float* __restrict__ b88, sx_bf16* __restrict__ b89, const float* __restrict__ b90, float* __restrict__ b91, float* __restrict__ b92, float* __restrict__ b93, sx_bf16* __restrict__ b94, const float* __restrict__ b95, float* __restrict__ b96, float* __restrict__ b97, float* __restrict__ b98, sx_bf16* __restrict__ b99, const float* __restrict__ b100, float* __restrict__ b101, float* __restrict__ b102, float* __restrict__ b103, sx_bf16* __restrict__ b104, const float* __restrict__ b105, float* __restrict__ b106, float* __restrict__ b107, float* __restrict__ b108, sx_bf16* __restrict__ b109, const float* __restrict__ b110, float* __restrict__ b111, float* __restrict__ b112, float* __restrict__ b113, sx_bf16* __restrict__ b114, const float* __restrict__ b115, float* __restrict__ b116, float* __restrict__ b117, float* __restrict__ b118, sx_bf16* __restrict__ b119, const float* __restrict__ b120, float* __restrict__ b121, float* __restrict__ b122, float* __restrict__ b123, sx_bf16* __restrict__ b124, const float* __restrict__ b125, float* __restrict__ b126, float* __restrict__ b127, float* __restrict__ b128, sx_bf16* __restrict__ b129, const float* __restrict__ b130, float* __restrict__ b131, float* __restrict__ b132, float* __restrict__ b133, sx_bf16* __restrict__ b134, const float* __restrict__ b135, float* __restrict__ b136, float* __restrict__ b137, float* __restrict__ b138, sx_bf16* __restrict__ b139, const float* __restrict__ b140, float* __restrict__ b141, float* __restrict__ b142, float* __restrict__ b143, sx_bf16* __restrict__ b144, const float* __restrict__ b145, float* __restrict__ b146, float* __restrict__ b147, float* __restrict__ b148, sx_bf16* __restrict__ b149, const float* __restrict__ b150, float* __restrict__ b151, float* __restrict__ b152, float* __restrict__ b153, sx_bf16* __restrict__ b154, const float* __restrict__ b155, float* __restrict__ b156, float* __restrict__ b157, float* __restrict__ b158, sx_bf16* __restrict__ b159, const float* __restrict__ b160, float* __restrict__ b161, float* __restrict__ b162, float* __restrict__ b163, sx_bf16* __restrict__ b164, const float* __restrict__ b165, float* __restrict__ b166, float* __restrict__ b167, float* __restrict__ b168, sx_bf16* __restrict__ b169, const float* __restrict__ b170, float* __restrict__ b171, float* __restrict__ b172, float* __restrict__ b173, sx_bf16* __restrict__ b174, const float* __restrict__ b175, float* __restrict__ b176, float* __restrict__ b177, float* __restrict__ b178, sx_bf16* __restrict__ b179, const float* __restrict__ b180, float* __restrict__ b181, float* __restrict__ b182, float* __restrict__ b183, sx_bf16* __restrict__ b184, const int* __restrict__ b185, const unsigned long long* __restrict__ sx_scalars) {
  const float s_b1 = __uint_as_float((unsigned)sx_scalars[0]);
  const float s_b2 = __uint_as_float((unsigned)sx_scalars[1]);
  const float s_one_minus_b1 = __uint_as_float((unsigned)sx_scalars[2]);
  const float s_one_minus_b2 = __uint_as_float((unsigned)sx_scalars[3]);
  const float s_bc2_sqrt = __uint_as_float((unsigned)sx_scalars[4]);
  const float s_eps = __uint_as_float((unsigned)sx_scalars[5]);
  const float s_step_size = __uint_as_float((unsigned)sx_scalars[6]);
  const float s_decay_on = __uint_as_float((unsigned)sx_scalars[7]);
  const float s_decay_off = __uint_as_float((unsigned)sx_scalars[8]);
  long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long stride = (long long)gridDim.x * blockDim.x;
  float coef = 1.0f;
  {
    double q = 1 / (((const double*)b185)[37] + 1e-6);
    coef = (float)(q < 1.0 ? q : 1.0);
  }
  bool clip = coef < 1.0f;
  decltype(b1) P = b1;
  decltype(b0) G = b0;
  decltype(b2) S0 = b2;
  decltype(b3) S1 = b3;
  decltype(b4) C = b4;
  long long n = 0;
  float decay = 1.0f;
  for (int t = 0; t < 37; ++t) {
    switch (t) {
      case 0:  // blocks.0.attn.wk.b
        P = b1; G = b0; S0 = b2; S1 = b3; C = b4; n = 16LL; decay = s_decay_on; break;
      case 1:  // blocks.0.attn.wk.w
        P = b6; G = b5; S0 = b7; S1 = b8; C = b9; n = 256LL; decay = s_decay_on; break;
      case 2:  // blocks.0.attn.wo.b
        P = b11; G = b10; S0 = b12; S1 = b13; C = b14; n = 16LL; decay = s_decay_on; break;
      case 3:  // blocks.0.attn.wo.w
        P = b16; G = b15; S0 = b17; S1 = b18; C = b19; n = 256LL; decay = s_decay_on; break;
      case 4:  // blocks.0.attn.wq.b
        P = b21; G = b20; S0 = b22; S1 = b23; C = b24; n = 16LL; decay = s_decay_on; break;
      case 5:  // blocks.0.attn.wq.w
        P = b26; G = b25; S0 = b27; S1 = b28; C = b29; n = 256LL; decay = s_decay_on; break;
      case 6:  // blocks.0.attn.wv.b
        P = b31; G = b30; S0 = b32; S1 = b33; C = b34; n = 16LL; decay = s_decay_on; break;
      case 7:  // blocks.0.attn.wv.w
        P = b36; G = b35; S0 = b37; S1 = b38; C = b39; n = 256LL; decay = s_decay_on; break;
      case 8:  // blocks.0.ln1.b
        P = b41; G = b40; S0 = b42; S1 = b43; C = b44; n = 16LL; decay = s_decay_on; break;
      case 9:  // blocks.0.ln1.g
        P = b46; G = b45; S0 = b47; S1 = b48; C = b49; n = 16LL; decay = s_decay_on; break;
      case 10:  // blocks.0.ln2.b
        P = b51; G = b50; S0 = b52; S1 = b53; C = b54; n = 16LL; decay = s_decay_on; break;
      case 11:  // blocks.0.ln2.g
        P = b56; G = b55; S0 = b57; S1 = b58; C = b59; n = 16LL; decay = s_decay_on; break;
      case 12:  // blocks.0.mlp.fc.b
        P = b61; G = b60; S0 = b62; S1 = b63; C = b64; n = 64LL; decay = s_decay_on; break;
      case 13:  // blocks.0.mlp.fc.w
        P = b66; G = b65; S0 = b67; S1 = b68; C = b69; n = 1024LL; decay = s_decay_on; break;
      case 14:  // blocks.0.mlp.proj.b
        P = b71; G = b70; S0 = b72; S1 = b73; C = b74; n = 16LL; decay = s_decay_on; break;
      case 15:  // blocks.0.mlp.proj.w
        P = b76; G = b75; S0 = b77; S1 = b78; C = b79; n = 1024LL; decay = s_decay_on; break;
      case 16:  // blocks.1.attn.wk.b
        P = b81; G = b80; S0 = b82; S1 = b83; C = b84; n = 16LL; decay = s_decay_on; break;
      case 17:  // blocks.1.attn.wk.w
        P = b86; G = b85; S0 = b87; S1 = b88; C = b89; n = 256LL; decay = s_decay_on; break;
      case 18:  // blocks.1.attn.wo.b
        P = b91; G = b90; S0 = b92; S1 = b93; C = b94; n = 16LL; decay = s_decay_on; break;
      case 19:  // blocks.1.attn.wo.w
        P = b96; G = b95; S0 = b97; S1 = b98; C = b99; n = 256LL; decay = s_decay_on; break;
      case 20:  // blocks.1.attn.wq.b
        P = b101; G = b100; S0 = b102; S1 = b103; C = b104; n = 16LL; decay = s_decay_on; break;
      case 21:  // blocks.1.attn.wq.w
        P = b106; G = b105; S0 = b107; S1 = b108; C = b109; n = 256LL; decay = s_decay_on; break;
      case 22:  // blocks.1.attn.wv.b
        P = b111; G = b110; S0 = b112; S1 = b113; C = b114; n = 16LL; decay = s_decay_on; break;
      case 23:  // blocks.1.attn.wv.w
        P = b116; G = b115; S0 = b117; S1 = b118; C = b119; n = 256LL; decay = s_decay_on; break;
      case 24:  // blocks.1.ln1.b
        P = b121; G = b120; S0 = b122; S1 = b123; C = b124; n = 16LL; decay = s_decay_on; break;
      case 25:  // blocks.1.ln1.g
        P = b126; G = b125; S0 = b127; S1 = b128; C = b129; n = 16LL; decay = s_decay_on; break;
      case 26:  // blocks.1.ln2.b
        P = b131; G = b130; S0 = b132; S1 = b133; C = b134; n = 16LL; decay = s_decay_on; break;
      case 27:  // blocks.1.ln2.g
        P = b136; G = b135; S0 = b137; S1 = b138; C = b139; n = 16LL; decay = s_decay_on; break;
      case 28:  // blocks.1.mlp.fc.b
        P = b141; G = b140; S0 = b142; S1 = b143; C = b144; n = 64LL; decay = s_decay_on; break;
      case 29:  // blocks.1.mlp.fc.w
        P = b146; G = b145; S0 = b147; S1 = b148; C = b149; n = 1024LL; decay = s_decay_on; break;
      case 30:  // blocks.1.mlp.proj.b
        P = b151; G = b150; S0 = b152; S1 = b153; C = b154; n = 16LL; decay = s_decay_on; break;
      case 31:  // blocks.1.mlp.proj.w
        P = b156; G = b155; S0 = b157; S1 = b158; C = b159; n = 1024LL; decay = s_decay_on; break;
      case 32:  // embed.w
        P = b161; G = b160; S0 = b162; S1 = b163; C = b164; n = 512LL; decay = s_decay_on; break;
      case 33:  // head.w
        P = b166; G = b165; S0 = b167; S1 = b168; C = b169; n = 512LL; decay = s_decay_on; break;
      case 34:  // ln-f.b
        P = b171; G = b170; S0 = b172; S1 = b173; C = b174; n = 16LL; decay = s_decay_on; break;
      case 35:  // ln-f.g
        P = b176; G = b175; S0 = b177; S1 = b178; C = b179; n = 16LL; decay = s_decay_on; break;
      default:  // pos.w
        P = b181; G = b180; S0 = b182; S1 = b183; C = b184; n = 128LL; decay = s_decay_on; break;
    }
    for (long long i = first; i < n; i += stride) {
      float gi = G[i] + 0.0f;
      if (clip) gi = gi * coef;
      float p = P[i];
      p = p * decay;
      float m = S0[i] * s_b1 + s_one_minus_b1 * gi;
      float v = S1[i] * s_b2 + s_one_minus_b2 * gi * gi;
      S0[i] = m;
      S1[i] = v;
      float denom = sqrtf(v) / s_bc2_sqrt + s_eps;
      p = p + s_step_size * m / denom;
      P[i] = p;
      C[i] = sx_f32_to_bf16(p);
    }
  }
}
