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
extern "C" __global__ void row_layer_norm_d99500ef(const float* __restrict__ b0, const float* __restrict__ b1, const float* __restrict__ b2, float* __restrict__ b3) {
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
      b3[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL] = v11;
    }
  }
}

// 256 units [2,2,8,8], each one thread's
extern "C" __global__ void attention_attention_32961b38(const float* __restrict__ b0, float* __restrict__ b1, const float* __restrict__ b2, float* __restrict__ b3, const float* __restrict__ b4, float* __restrict__ b5, float* __restrict__ b6) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 256LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u3 = unit % 8LL;
    long long u2 = (unit / 8LL) % 8LL;
    long long u1 = ((unit / 8LL) / 8LL) % 2LL;
    long long u0 = (((unit / 8LL) / 8LL) / 2LL) % 2LL;
    float v0 = b0[0LL + u0 * 128LL + u1 * 8LL + u2 * 16LL + u3 * 1LL];
    b1[0LL + u0 * 128LL + u1 * 64LL + u2 * 8LL + u3 * 1LL] = v0;
    float v1 = b2[0LL + u0 * 128LL + u1 * 8LL + u2 * 16LL + u3 * 1LL];
    b3[0LL + u0 * 128LL + u1 * 64LL + u2 * 8LL + u3 * 1LL] = v1;
    float v2 = b4[0LL + u0 * 128LL + u1 * 8LL + u2 * 16LL + u3 * 1LL];
    b5[0LL + u0 * 128LL + u1 * 64LL + u2 * 8LL + u3 * 1LL] = v2;
    float v3 = sx_neg_inf();
    float v4 = 0.0f;
    for (long long i5 = 0; i5 < 8LL; ++i5) {
      float v6 = 0.0f;
      for (long long i7 = 0; i7 < 8LL; ++i7) {
        float v8 = b0[0LL + u0 * 128LL + u1 * 8LL + u2 * 16LL + i7 * 1LL];
        float v9 = b2[0LL + u0 * 128LL + u1 * 8LL + i5 * 16LL + i7 * 1LL];
        v6 += v8 * v9;
      }
      float v10 = i5 > u2 + 0LL ? sx_neg_inf() : v6 * 3.535533845e-01f;
      v3 = v10 > v3 ? v10 : v3;
    }
    for (long long i11 = 0; i11 < 8LL; ++i11) {
      float v12 = 0.0f;
      for (long long i13 = 0; i13 < 8LL; ++i13) {
        float v14 = b0[0LL + u0 * 128LL + u1 * 8LL + u2 * 16LL + i13 * 1LL];
        float v15 = b2[0LL + u0 * 128LL + u1 * 8LL + i11 * 16LL + i13 * 1LL];
        v12 += v14 * v15;
      }
      float v16 = i11 > u2 + 0LL ? sx_neg_inf() : v12 * 3.535533845e-01f;
      v4 += expf(v16 - v3);
    }
    float v17 = 0.0f;
    for (long long i18 = 0; i18 < 8LL; ++i18) {
      float v19 = 0.0f;
      for (long long i20 = 0; i20 < 8LL; ++i20) {
        float v21 = b0[0LL + u0 * 128LL + u1 * 8LL + u2 * 16LL + i20 * 1LL];
        float v22 = b2[0LL + u0 * 128LL + u1 * 8LL + i18 * 16LL + i20 * 1LL];
        v19 += v21 * v22;
      }
      float v23 = i18 > u2 + 0LL ? sx_neg_inf() : v19 * 3.535533845e-01f;
      float v24 = expf(v23 - v3) / v4;
      float v25 = b4[0LL + u0 * 128LL + u1 * 8LL + i18 * 16LL + u3 * 1LL];
      v17 += v24 * v25;
    }
    b6[0LL + u0 * 128LL + u1 * 8LL + u2 * 16LL + u3 * 1LL] = v17;
  }
}

// 16 units [2,8,1], each one thread's
extern "C" __global__ void row_layer_norm_ee4696e8(const float* __restrict__ b0, const float* __restrict__ b1, float* __restrict__ b2, const float* __restrict__ b3, const float* __restrict__ b4, float* __restrict__ b5) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 16LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u1 = unit % 8LL;
    long long u0 = (unit / 8LL) % 2LL;
    for (long long i0 = 0; i0 < 16LL; ++i0) {
      float v1 = b0[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL];
      float v2 = b1[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL];
      float v3 = v1 + v2;
      b2[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL] = v3;
    }
    float v5 = 0.0f;
    for (long long i6 = 0; i6 < 16LL; ++i6) {
      float v7 = b0[0LL + u0 * 128LL + u1 * 16LL + i6 * 1LL];
      float v8 = b1[0LL + u0 * 128LL + u1 * 16LL + i6 * 1LL];
      float v9 = v7 + v8;
      v5 += v9;
    }
    v5 = v5 / (float)16LL;
    float v10 = 0.0f;
    for (long long i11 = 0; i11 < 16LL; ++i11) {
      float v12 = b0[0LL + u0 * 128LL + u1 * 16LL + i11 * 1LL];
      float v13 = b1[0LL + u0 * 128LL + u1 * 16LL + i11 * 1LL];
      float v14 = v12 + v13;
      v10 += (v14 - v5) * (v14 - v5);
    }
    float v15 = 1.0f / sqrtf(v10 / (float)16LL + 9.999999747e-06f);
    for (long long i4 = 0; i4 < 16LL; ++i4) {
      float v16 = b0[0LL + u0 * 128LL + u1 * 16LL + i4 * 1LL];
      float v17 = b1[0LL + u0 * 128LL + u1 * 16LL + i4 * 1LL];
      float v18 = v16 + v17;
      float v19 = b3[0LL + i4 * 1LL];
      float v20 = b4[0LL + i4 * 1LL];
      float v21 = (v18 - v5) * v15 * v19 + v20;
      b5[0LL + u0 * 128LL + u1 * 16LL + i4 * 1LL] = v21;
    }
  }
}

// 1 units [1,1,1], each one thread's
extern "C" __global__ void loss_cross_entropy_3672477c(const float* __restrict__ b0, const int* __restrict__ b1, float* __restrict__ b2, float* __restrict__ b3) {
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
          float v10 = b0[0LL + i1 * 256LL + i2 * 32LL + i9 * 1LL];
          if (v10 > v7) { v7 = v10; v8 = i9; }
        }
        float v11 = 0.0f;
        for (long long i12 = 0; i12 < 32LL; ++i12) {
          float v13 = b0[0LL + i1 * 256LL + i2 * 32LL + i12 * 1LL];
          v11 += expf(v13 - v7);
        }
        long long t14 = (v6 >= 0 && v6 < 32LL) ? (long long)v6 : 0LL;
        float v15 = b0[0LL + i1 * 256LL + i2 * 32LL + t14 * 1LL];
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
          float v25 = b0[0LL + i19 * 256LL + i20 * 32LL + i24 * 1LL];
          v22 = v25 > v22 ? v25 : v22;
        }
        for (long long i26 = 0; i26 < 32LL; ++i26) {
          float v27 = b0[0LL + i19 * 256LL + i20 * 32LL + i26 * 1LL];
          v23 += expf(v27 - v22);
        }
        for (long long i21 = 0; i21 < 32LL; ++i21) {
          float v28 = b0[0LL + i19 * 256LL + i20 * 32LL + i21 * 1LL];
          float v29 = expf(v28 - v22) / v23;
          int v30 = (int)(0LL + i21 * 1LL);
          int v31 = b1[0LL + i19 * 8LL + i20 * 1LL];
          int v32 = (((double)v30 == (double)v31) ? 1 : 0);
          float v33 = (float)v32;
          float v34 = v29 - v33;
          float v38 = v34 * v37;
          b3[0LL + i19 * 256LL + i20 * 32LL + i21 * 1LL] = v38;
        }
      }
    }
  }
}

// 16 units [2,8,1], each one thread's
extern "C" __global__ void row_mean_1f2c27f0(const float* __restrict__ b0, const float* __restrict__ b1, const float* __restrict__ b2, float* __restrict__ b3, float* __restrict__ b4) {
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
      float v22 = b1[0LL + u0 * 128LL + u1 * 16LL + i21 * 1LL];
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
      float v34 = b1[0LL + u0 * 128LL + u1 * 16LL + i33 * 1LL];
      float v35 = b2[0LL + i33 * 1LL];
      float v36 = v34 * v35;
      v32 += v36;
    }
    float v37 = (float)((double)v32 / (double)16);
    for (long long i0 = 0; i0 < 16LL; ++i0) {
      float v14 = b1[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL];
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
      float v41 = b1[0LL + u0 * 128LL + u1 * 16LL + i40 * 1LL];
      float v42 = b0[0LL + u0 * 128LL + u1 * 16LL + i40 * 1LL];
      float v43 = v42 - v7;
      float v44 = v43 * v13;
      float v45 = v41 * v44;
      b4[0LL + u0 * 128LL + u1 * 16LL + i40 * 1LL] = v45;
    }
  }
}

// 16 units [1,1,16], each one thread's
extern "C" __global__ void column_sum_to_d960b6c3(const float* __restrict__ b0, float* __restrict__ b1, const float* __restrict__ b2, float* __restrict__ b3, const float* __restrict__ b4, float* __restrict__ b5) {
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
        float v9 = b2[0LL + i7 * 128LL + i8 * 16LL + u2 * 1LL];
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
        float v15 = b4[0LL + i13 * 128LL + i14 * 16LL + u2 * 1LL];
        v12 += v15;
      }
    }
    long long v16 = (0LL * 16LL + u2);
    long long v17 = v16 % 16LL;
    v16 = v16 / 16LL;
    b5[0LL + v17 * 1LL] = v12;
  }
}

// 16 units [1,1,16], each one thread's
extern "C" __global__ void column_sum_to_62f6be2a(const float* __restrict__ b0, float* __restrict__ b1, const float* __restrict__ b2, float* __restrict__ b3, const float* __restrict__ b4, const float* __restrict__ b5, float* __restrict__ b6, float* __restrict__ b7) {
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
        float v9 = b2[0LL + i7 * 128LL + i8 * 16LL + u2 * 1LL];
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
    float v17 = 0.0f;
    for (long long i18 = 0; i18 < 2LL; ++i18) {
      for (long long i19 = 0; i19 < 8LL; ++i19) {
        float v20 = b4[0LL + i18 * 128LL + i19 * 16LL + u2 * 1LL];
        float v21 = b5[0LL + i18 * 128LL + i19 * 16LL + u2 * 1LL];
        float v22 = v20 + v21;
        v17 += v22;
      }
    }
    long long v23 = (0LL * 16LL + u2);
    long long v24 = v23 % 16LL;
    v23 = v23 / 16LL;
    b7[0LL + v24 * 1LL] = v17;
  }
}

// 256 units [2,2,8,8], each one thread's
extern "C" __global__ void map_permute_f4f9dc39(const float* __restrict__ b0, float* __restrict__ b1) {
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < 256LL;
       unit += (long long)gridDim.x * blockDim.x) {
    long long u3 = unit % 8LL;
    long long u2 = (unit / 8LL) % 8LL;
    long long u1 = ((unit / 8LL) / 8LL) % 2LL;
    long long u0 = (((unit / 8LL) / 8LL) / 2LL) % 2LL;
    float v0 = b0[0LL + u0 * 128LL + u1 * 8LL + u2 * 16LL + u3 * 1LL];
    b1[0LL + u0 * 128LL + u1 * 64LL + u2 * 8LL + u3 * 1LL] = v0;
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
extern "C" __global__ void column_permute_4a6f5e00(const float* __restrict__ b0, float* __restrict__ b1, float* __restrict__ b2, const float* __restrict__ b3, float* __restrict__ b4, float* __restrict__ b5, const float* __restrict__ b6, float* __restrict__ b7, float* __restrict__ b8) {
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
        float v7 = b0[0LL + v6 * 128LL + v5 * 8LL + v4 * 64LL + v3 * 1LL];
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
    float v13 = 0.0f;
    for (long long i14 = 0; i14 < 2LL; ++i14) {
      for (long long i15 = 0; i15 < 8LL; ++i15) {
        long long v16 = (((0LL * 2LL + i14) * 8LL + i15) * 16LL + u2);
        long long v17 = v16 % 8LL;
        v16 = v16 / 8LL;
        long long v18 = v16 % 2LL;
        v16 = v16 / 2LL;
        long long v19 = v16 % 8LL;
        v16 = v16 / 8LL;
        long long v20 = v16 % 2LL;
        v16 = v16 / 2LL;
        float v21 = b0[0LL + v20 * 128LL + v19 * 8LL + v18 * 64LL + v17 * 1LL];
        v13 += v21;
      }
    }
    long long v22 = (0LL * 16LL + u2);
    long long v23 = v22 % 16LL;
    v22 = v22 / 16LL;
    b2[0LL + v23 * 1LL] = v13;
    for (long long i24 = 0; i24 < 2LL; ++i24) {
      for (long long i25 = 0; i25 < 8LL; ++i25) {
        long long v26 = (((0LL * 2LL + i24) * 8LL + i25) * 16LL + u2);
        long long v27 = v26 % 8LL;
        v26 = v26 / 8LL;
        long long v28 = v26 % 2LL;
        v26 = v26 / 2LL;
        long long v29 = v26 % 8LL;
        v26 = v26 / 8LL;
        long long v30 = v26 % 2LL;
        v26 = v26 / 2LL;
        float v31 = b3[0LL + v30 * 128LL + v29 * 8LL + v28 * 64LL + v27 * 1LL];
        long long v32 = (((0LL * 2LL + i24) * 8LL + i25) * 16LL + u2);
        long long v33 = v32 % 8LL;
        v32 = v32 / 8LL;
        long long v34 = v32 % 2LL;
        v32 = v32 / 2LL;
        long long v35 = v32 % 8LL;
        v32 = v32 / 8LL;
        long long v36 = v32 % 2LL;
        v32 = v32 / 2LL;
        b4[0LL + v36 * 128LL + v35 * 16LL + v34 * 8LL + v33 * 1LL] = v31;
      }
    }
    float v37 = 0.0f;
    for (long long i38 = 0; i38 < 2LL; ++i38) {
      for (long long i39 = 0; i39 < 8LL; ++i39) {
        long long v40 = (((0LL * 2LL + i38) * 8LL + i39) * 16LL + u2);
        long long v41 = v40 % 8LL;
        v40 = v40 / 8LL;
        long long v42 = v40 % 2LL;
        v40 = v40 / 2LL;
        long long v43 = v40 % 8LL;
        v40 = v40 / 8LL;
        long long v44 = v40 % 2LL;
        v40 = v40 / 2LL;
        float v45 = b3[0LL + v44 * 128LL + v43 * 8LL + v42 * 64LL + v41 * 1LL];
        v37 += v45;
      }
    }
    long long v46 = (0LL * 16LL + u2);
    long long v47 = v46 % 16LL;
    v46 = v46 / 16LL;
    b5[0LL + v47 * 1LL] = v37;
    for (long long i48 = 0; i48 < 2LL; ++i48) {
      for (long long i49 = 0; i49 < 8LL; ++i49) {
        long long v50 = (((0LL * 2LL + i48) * 8LL + i49) * 16LL + u2);
        long long v51 = v50 % 8LL;
        v50 = v50 / 8LL;
        long long v52 = v50 % 2LL;
        v50 = v50 / 2LL;
        long long v53 = v50 % 8LL;
        v50 = v50 / 8LL;
        long long v54 = v50 % 2LL;
        v50 = v50 / 2LL;
        float v55 = b6[0LL + v54 * 128LL + v53 * 8LL + v52 * 64LL + v51 * 1LL];
        long long v56 = (((0LL * 2LL + i48) * 8LL + i49) * 16LL + u2);
        long long v57 = v56 % 8LL;
        v56 = v56 / 8LL;
        long long v58 = v56 % 2LL;
        v56 = v56 / 2LL;
        long long v59 = v56 % 8LL;
        v56 = v56 / 8LL;
        long long v60 = v56 % 2LL;
        v56 = v56 / 2LL;
        b7[0LL + v60 * 128LL + v59 * 16LL + v58 * 8LL + v57 * 1LL] = v55;
      }
    }
    float v61 = 0.0f;
    for (long long i62 = 0; i62 < 2LL; ++i62) {
      for (long long i63 = 0; i63 < 8LL; ++i63) {
        long long v64 = (((0LL * 2LL + i62) * 8LL + i63) * 16LL + u2);
        long long v65 = v64 % 8LL;
        v64 = v64 / 8LL;
        long long v66 = v64 % 2LL;
        v64 = v64 / 2LL;
        long long v67 = v64 % 8LL;
        v64 = v64 / 8LL;
        long long v68 = v64 % 2LL;
        v64 = v64 / 2LL;
        float v69 = b6[0LL + v68 * 128LL + v67 * 8LL + v66 * 64LL + v65 * 1LL];
        v61 += v69;
      }
    }
    long long v70 = (0LL * 16LL + u2);
    long long v71 = v70 % 16LL;
    v70 = v70 / 16LL;
    b8[0LL + v71 * 1LL] = v61;
  }
}

// 16 units [2,8,1], each one thread's
extern "C" __global__ void row_mean_18355f6b(const float* __restrict__ b0, const float* __restrict__ b1, const float* __restrict__ b2, float* __restrict__ b3, const float* __restrict__ b4, const float* __restrict__ b5, float* __restrict__ b6, float* __restrict__ b7) {
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
      b3[0LL + u0 * 128LL + u1 * 16LL + i0 * 1LL] = v5;
    }
    float v7 = 0.0f;
    float v10 = 0.0f;
    for (long long i11 = 0; i11 < 16LL; ++i11) {
      float v12 = b4[0LL + u0 * 128LL + u1 * 16LL + i11 * 1LL];
      v10 += v12;
    }
    float v13 = (float)((double)v10 / (double)16);
    for (long long i8 = 0; i8 < 16LL; ++i8) {
      float v9 = b4[0LL + u0 * 128LL + u1 * 16LL + i8 * 1LL];
      float v14 = v9 - v13;
      float v15 = v14 * v14;
      v7 += v15;
    }
    float v16 = (float)((double)v7 / (double)16);
    float v17 = 9.999999747e-06f;
    float v18 = v16 + v17;
    float v19 = 1.0f / sqrtf(v18);
    float v30 = 0.0f;
    for (long long i31 = 0; i31 < 16LL; ++i31) {
      float v32 = b0[0LL + u0 * 128LL + u1 * 16LL + i31 * 1LL];
      float v33 = b1[0LL + u0 * 128LL + u1 * 16LL + i31 * 1LL];
      float v34 = v32 + v33;
      float v35 = b2[0LL + u0 * 128LL + u1 * 16LL + i31 * 1LL];
      float v36 = v34 + v35;
      float v37 = b5[0LL + i31 * 1LL];
      float v38 = v36 * v37;
      float v39 = b4[0LL + u0 * 128LL + u1 * 16LL + i31 * 1LL];
      float v40 = v39 - v13;
      float v41 = v40 * v19;
      float v42 = v38 * v41;
      v30 += v42;
    }
    float v43 = (float)((double)v30 / (double)16);
    float v46 = 0.0f;
    for (long long i47 = 0; i47 < 16LL; ++i47) {
      float v48 = b0[0LL + u0 * 128LL + u1 * 16LL + i47 * 1LL];
      float v49 = b1[0LL + u0 * 128LL + u1 * 16LL + i47 * 1LL];
      float v50 = v48 + v49;
      float v51 = b2[0LL + u0 * 128LL + u1 * 16LL + i47 * 1LL];
      float v52 = v50 + v51;
      float v53 = b5[0LL + i47 * 1LL];
      float v54 = v52 * v53;
      v46 += v54;
    }
    float v55 = (float)((double)v46 / (double)16);
    for (long long i6 = 0; i6 < 16LL; ++i6) {
      float v20 = b0[0LL + u0 * 128LL + u1 * 16LL + i6 * 1LL];
      float v21 = b1[0LL + u0 * 128LL + u1 * 16LL + i6 * 1LL];
      float v22 = v20 + v21;
      float v23 = b2[0LL + u0 * 128LL + u1 * 16LL + i6 * 1LL];
      float v24 = v22 + v23;
      float v25 = b5[0LL + i6 * 1LL];
      float v26 = v24 * v25;
      float v27 = b4[0LL + u0 * 128LL + u1 * 16LL + i6 * 1LL];
      float v28 = v27 - v13;
      float v29 = v28 * v19;
      float v44 = v29 * v43;
      float v45 = v26 - v44;
      float v56 = v45 - v55;
      float v57 = v19 * v56;
      b6[0LL + u0 * 128LL + u1 * 16LL + i6 * 1LL] = v57;
    }
    for (long long i58 = 0; i58 < 16LL; ++i58) {
      float v59 = b0[0LL + u0 * 128LL + u1 * 16LL + i58 * 1LL];
      float v60 = b1[0LL + u0 * 128LL + u1 * 16LL + i58 * 1LL];
      float v61 = v59 + v60;
      float v62 = b2[0LL + u0 * 128LL + u1 * 16LL + i58 * 1LL];
      float v63 = v61 + v62;
      float v64 = b4[0LL + u0 * 128LL + u1 * 16LL + i58 * 1LL];
      float v65 = v64 - v13;
      float v66 = v65 * v19;
      float v67 = v63 * v66;
      b7[0LL + u0 * 128LL + u1 * 16LL + i58 * 1LL] = v67;
    }
  }
}

// 16 units [1,1,16], each one thread's
extern "C" __global__ void column_sum_to_ecbfd656(const float* __restrict__ b0, float* __restrict__ b1, const float* __restrict__ b2, float* __restrict__ b3, const float* __restrict__ b4, const float* __restrict__ b5, float* __restrict__ b6, float* __restrict__ b7) {
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
        float v9 = b2[0LL + i7 * 128LL + i8 * 16LL + u2 * 1LL];
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

extern "C" __global__ void optimizer_adamw(const float* __restrict__ b0, float* __restrict__ b1, float* __restrict__ b2, float* __restrict__ b3, const float* __restrict__ b4, float* __restrict__ b5, float* __restrict__ b6, float* __restrict__ b7, const float* __restrict__ b8, float* __restrict__ b9, float* __restrict__ b10, float* __restrict__ b11, const float* __restrict__ b12, float* __restrict__ b13, float* __restrict__ b14, float* __restrict__ b15, const float* __restrict__ b16, float* __restrict__ b17, float* __restrict__ b18, float* __restrict__ b19, const float* __restrict__ b20, float* __restrict__ b21, float* __restrict__ b22, float* __restrict__ b23, const float* __restrict__ b24, float* __restrict__ b25, float* __restrict__ b26, float* __restrict__ b27, const float* __restrict__ b28, float* __restrict__ b29, float* __restrict__ b30, float* __restrict__ b31, const float* __restrict__ b32, float* __restrict__ b33, float* __restrict__ b34, float* __restrict__ b35, const float* __restrict__ b36, float* __restrict__ b37, float* __restrict__ b38, float* __restrict__ b39, const float* __restrict__ b40, float* __restrict__ b41, float* __restrict__ b42, float* __restrict__ b43, const float* __restrict__ b44, float* __restrict__ b45, float* __restrict__ b46, float* __restrict__ b47, const float* __restrict__ b48, float* __restrict__ b49, float* __restrict__ b50, float* __restrict__ b51, const float* __restrict__ b52, float* __restrict__ b53, float* __restrict__ b54, float* __restrict__ b55, const float* __restrict__ b56, float* __restrict__ b57, float* __restrict__ b58, float* __restrict__ b59, const float* __restrict__ b60, float* __restrict__ b61, float* __restrict__ b62, float* __restrict__ b63, const float* __restrict__ b64, float* __restrict__ b65, float* __restrict__ b66, float* __restrict__ b67, const float* __restrict__ b68, float* __restrict__ b69, float* __restrict__ b70, float* __restrict__ b71, const float* __restrict__ b72, float* __restrict__ b73, float* __restrict__ b74, float* __restrict__ b75, const float* __restrict__ b76, float* __restrict__ b77, float* __restrict__ b78, float* __restrict__ b79, const float* __restrict__ b80, float* __restrict__ b81, float* __restrict__ b82, float* __restrict__ b83, const float* __restrict__ b84, float* __restrict__ b85, float* __restrict__ b86, float* __restrict__ b87, const float* __restrict__ b88, float* __restrict__ b89, float* __restrict__ b90, float* __restrict__ b91, const float* __restrict__ b92, float* __restrict__ b93, float* __restrict__ b94, float* __restrict__ b95, const float* __restrict__ b96, float* __restrict__ b97, float* __restrict__ b98, float* __restrict__ b99, const float* __restrict__ b100, float* __restrict__ b101, float* __restrict__ b102, float* __restrict__ b103, const float* __restrict__ b104, float* __restrict__ b105, float* __restrict__ b106, float* __restrict__ b107, const float* __restrict__ b108, float* __restrict__ b109, float* __restrict__ b110, float* __restrict__ b111, const float* __restrict__ b112, float* __restrict__ b113, float* __restrict__ b114, float* __restrict__ b115, const float* __restrict__ b116, float* __restrict__ b117, float* __restrict__ b118, float* __restrict__ b119, const float* __restrict__ b120, float* __restrict__ b121, float* __restrict__ b122, float* __restrict__ b123, const float* __restrict__ b124, float* __restrict__ b125, float* __restrict__ b126, float* __restrict__ b127, const float* __restrict__ b128, float* __restrict__ b129, float* __restrict__ b130, float* __restrict__ b131, const float* __restrict__ b132, float* __restrict__ b133, float* __restrict__ b134, float* __restrict__ b135, const float* __restrict__ b136, float* __restrict__ b137, float* __restrict__ b138, float* __restrict__ b139, const float* __restrict__ b140, float* __restrict__ b141, float* __restrict__ b142, float* __restrict__ b143, const float* __restrict__ b144, float* __restrict__ b145, float* __restrict__ b146, float* __restrict__ b147, const int* __restrict__ b148, const unsigned long long* __restrict__ sx_scalars) {
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
    double q = 1 / (((const double*)b148)[37] + 1e-6);
    coef = (float)(q < 1.0 ? q : 1.0);
  }
  bool clip = coef < 1.0f;
  decltype(b1) P = b1;
  decltype(b0) G = b0;
  decltype(b2) S0 = b2;
  decltype(b3) S1 = b3;
  long long n = 0;
  float decay = 1.0f;
  for (int t = 0; t < 37; ++t) {
    switch (t) {
      case 0:  // blocks.0.attn.wk.b
        P = b1; G = b0; S0 = b2; S1 = b3; n = 16LL; decay = s_decay_on; break;
      case 1:  // blocks.0.attn.wk.w
        P = b5; G = b4; S0 = b6; S1 = b7; n = 256LL; decay = s_decay_on; break;
      case 2:  // blocks.0.attn.wo.b
        P = b9; G = b8; S0 = b10; S1 = b11; n = 16LL; decay = s_decay_on; break;
      case 3:  // blocks.0.attn.wo.w
        P = b13; G = b12; S0 = b14; S1 = b15; n = 256LL; decay = s_decay_on; break;
      case 4:  // blocks.0.attn.wq.b
        P = b17; G = b16; S0 = b18; S1 = b19; n = 16LL; decay = s_decay_on; break;
      case 5:  // blocks.0.attn.wq.w
        P = b21; G = b20; S0 = b22; S1 = b23; n = 256LL; decay = s_decay_on; break;
      case 6:  // blocks.0.attn.wv.b
        P = b25; G = b24; S0 = b26; S1 = b27; n = 16LL; decay = s_decay_on; break;
      case 7:  // blocks.0.attn.wv.w
        P = b29; G = b28; S0 = b30; S1 = b31; n = 256LL; decay = s_decay_on; break;
      case 8:  // blocks.0.ln1.b
        P = b33; G = b32; S0 = b34; S1 = b35; n = 16LL; decay = s_decay_on; break;
      case 9:  // blocks.0.ln1.g
        P = b37; G = b36; S0 = b38; S1 = b39; n = 16LL; decay = s_decay_on; break;
      case 10:  // blocks.0.ln2.b
        P = b41; G = b40; S0 = b42; S1 = b43; n = 16LL; decay = s_decay_on; break;
      case 11:  // blocks.0.ln2.g
        P = b45; G = b44; S0 = b46; S1 = b47; n = 16LL; decay = s_decay_on; break;
      case 12:  // blocks.0.mlp.fc.b
        P = b49; G = b48; S0 = b50; S1 = b51; n = 64LL; decay = s_decay_on; break;
      case 13:  // blocks.0.mlp.fc.w
        P = b53; G = b52; S0 = b54; S1 = b55; n = 1024LL; decay = s_decay_on; break;
      case 14:  // blocks.0.mlp.proj.b
        P = b57; G = b56; S0 = b58; S1 = b59; n = 16LL; decay = s_decay_on; break;
      case 15:  // blocks.0.mlp.proj.w
        P = b61; G = b60; S0 = b62; S1 = b63; n = 1024LL; decay = s_decay_on; break;
      case 16:  // blocks.1.attn.wk.b
        P = b65; G = b64; S0 = b66; S1 = b67; n = 16LL; decay = s_decay_on; break;
      case 17:  // blocks.1.attn.wk.w
        P = b69; G = b68; S0 = b70; S1 = b71; n = 256LL; decay = s_decay_on; break;
      case 18:  // blocks.1.attn.wo.b
        P = b73; G = b72; S0 = b74; S1 = b75; n = 16LL; decay = s_decay_on; break;
      case 19:  // blocks.1.attn.wo.w
        P = b77; G = b76; S0 = b78; S1 = b79; n = 256LL; decay = s_decay_on; break;
      case 20:  // blocks.1.attn.wq.b
        P = b81; G = b80; S0 = b82; S1 = b83; n = 16LL; decay = s_decay_on; break;
      case 21:  // blocks.1.attn.wq.w
        P = b85; G = b84; S0 = b86; S1 = b87; n = 256LL; decay = s_decay_on; break;
      case 22:  // blocks.1.attn.wv.b
        P = b89; G = b88; S0 = b90; S1 = b91; n = 16LL; decay = s_decay_on; break;
      case 23:  // blocks.1.attn.wv.w
        P = b93; G = b92; S0 = b94; S1 = b95; n = 256LL; decay = s_decay_on; break;
      case 24:  // blocks.1.ln1.b
        P = b97; G = b96; S0 = b98; S1 = b99; n = 16LL; decay = s_decay_on; break;
      case 25:  // blocks.1.ln1.g
        P = b101; G = b100; S0 = b102; S1 = b103; n = 16LL; decay = s_decay_on; break;
      case 26:  // blocks.1.ln2.b
        P = b105; G = b104; S0 = b106; S1 = b107; n = 16LL; decay = s_decay_on; break;
      case 27:  // blocks.1.ln2.g
        P = b109; G = b108; S0 = b110; S1 = b111; n = 16LL; decay = s_decay_on; break;
      case 28:  // blocks.1.mlp.fc.b
        P = b113; G = b112; S0 = b114; S1 = b115; n = 64LL; decay = s_decay_on; break;
      case 29:  // blocks.1.mlp.fc.w
        P = b117; G = b116; S0 = b118; S1 = b119; n = 1024LL; decay = s_decay_on; break;
      case 30:  // blocks.1.mlp.proj.b
        P = b121; G = b120; S0 = b122; S1 = b123; n = 16LL; decay = s_decay_on; break;
      case 31:  // blocks.1.mlp.proj.w
        P = b125; G = b124; S0 = b126; S1 = b127; n = 1024LL; decay = s_decay_on; break;
      case 32:  // embed.w
        P = b129; G = b128; S0 = b130; S1 = b131; n = 512LL; decay = s_decay_on; break;
      case 33:  // head.w
        P = b133; G = b132; S0 = b134; S1 = b135; n = 512LL; decay = s_decay_on; break;
      case 34:  // ln-f.b
        P = b137; G = b136; S0 = b138; S1 = b139; n = 16LL; decay = s_decay_on; break;
      case 35:  // ln-f.g
        P = b141; G = b140; S0 = b142; S1 = b143; n = 16LL; decay = s_decay_on; break;
      default:  // pos.w
        P = b145; G = b144; S0 = b146; S1 = b147; n = 128LL; decay = s_decay_on; break;
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
    }
  }
}
