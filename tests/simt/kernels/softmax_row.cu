// One warp per row (blockDim = (32, rows per block)): the row's maximum and
// sum of exponentials by butterfly shuffles, so every lane holds both.
extern "C" __global__ void softmax_rows(float* out, const float* in, int rows, int cols) {
  int row = blockIdx.x * blockDim.y + threadIdx.y;
  if (row >= rows) return;  // whole warps leave together
  const float* x = in + row * cols;
  float m = __int_as_float(0xff800000);  // -inf: NVRTC has no INFINITY without includes
  for (int c = threadIdx.x; c < cols; c += 32) m = fmaxf(m, x[c]);
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += 32) s += expf(x[c] - m);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  float inv = 1.0f / s;
  for (int c = threadIdx.x; c < cols; c += 32) out[row * cols + c] = expf(x[c] - m) * inv;
}
