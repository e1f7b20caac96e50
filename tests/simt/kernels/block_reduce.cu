// One block sums one row of `cols` floats (cols <= blockDim.x <= 1024): a
// shared-memory tree with a barrier per level, then the last 32 partial
// sums by warp shuffles.
extern "C" __global__ void block_sum(float* out, const float* in, int cols) {
  __shared__ float partial[1024];
  unsigned t = threadIdx.x;
  partial[t] = t < (unsigned)cols ? in[blockIdx.x * cols + t] : 0.0f;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride >= 32; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t < 32) {
    float s = partial[t];
    for (int offset = 16; offset > 0; offset /= 2) s += __shfl_down_sync(0xffffffffu, s, offset);
    if (t == 0) out[blockIdx.x] = s;
  }
}
