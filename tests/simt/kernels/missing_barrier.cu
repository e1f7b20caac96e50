// The last thread sums what every thread wrote to shared memory. Without the
// barrier it reads slots not yet written, which thread order hides (the last
// thread runs last) and reverse order shows.
extern "C" __global__ void last_thread_sum_no_barrier(float* out, const float* in) {
  __shared__ float slot[256];
  slot[threadIdx.x] = in[threadIdx.x];
  if (threadIdx.x == blockDim.x - 1) {
    float s = 0.0f;
    for (unsigned i = 0; i < blockDim.x; ++i) s += slot[i];
    out[0] = s;
  }
}

extern "C" __global__ void last_thread_sum(float* out, const float* in) {
  __shared__ float slot[256];
  slot[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  if (threadIdx.x == blockDim.x - 1) {
    float s = 0.0f;
    for (unsigned i = 0; i < blockDim.x; ++i) s += slot[i];
    out[0] = s;
  }
}
