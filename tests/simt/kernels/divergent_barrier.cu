// Barriers that not every thread of the block reaches: a hang on a GPU (or
// undefined behaviour), an error in the shim.
extern "C" __global__ void early_return_then_barrier(float* out, int n) {
  __shared__ float slot[256];
  if (threadIdx.x >= (unsigned)n) return;
  slot[threadIdx.x] = 1.0f;
  __syncthreads();
  out[threadIdx.x] = slot[(threadIdx.x + 1) % n];
}

extern "C" __global__ void barrier_in_both_branches(float* out) {
  if (threadIdx.x % 2 == 0) {
    out[threadIdx.x] = 0.0f;
    __syncthreads();
  } else {
    out[threadIdx.x] = 1.0f;
    __syncthreads();
  }
}

extern "C" __global__ void shuffle_in_half_a_warp(float* out) {
  float v = threadIdx.x;
  if (threadIdx.x < 16) v = __shfl_xor_sync(0xffffffffu, v, 1);
  out[threadIdx.x] = v;
}
