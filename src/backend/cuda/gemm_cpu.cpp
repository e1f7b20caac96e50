// The CPU GEMM with cuBLASLt's semantics (gemm_cpu.h). Operands are first
// copied as op(A) rows and op(B) columns (each contiguous over k), so the
// inner loop is a plain dot product summed in k order.
#include "backend/cuda/gemm_cpu.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "backend/cuda/kir_interp.h"
#include "backend/cuda/kir_interp_internal.h"
#include "util/error.h"

namespace sx::cuda {

float round_tf32(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  if ((b & 0x7f800000u) != 0x7f800000u) b = (b + 0x1000u) & 0xffffe000u;  // inf and NaN stay
  std::memcpy(&x, &b, 4);
  return x;
}

namespace {

float read(const void* p, kir::Type t, int64_t i) {
  if (t == kir::Type::bf16) return kir::from_bf16_bits(static_cast<const uint16_t*>(p)[i]);
  return static_cast<const float*>(p)[i];
}

void write(void* p, kir::Type t, int64_t i, float v) {
  if (t == kir::Type::bf16)
    static_cast<uint16_t*>(p)[i] = kir::to_bf16_bits(v);
  else
    static_cast<float*>(p)[i] = v;
}

}  // namespace

void gemm_cpu(const kir::Gemm& c, const void* a, const void* b, void* d, const void* bias, void* aux, void* bias_grad) {
  using E = kir::GemmEpilogue;
  const int64_t m = c.m, n = c.n, k = c.k;
  const bool tf32 = c.compute == kir::GemmCompute::tf32;
  std::vector<float> ar(static_cast<size_t>(m * k)), bc(static_cast<size_t>(n * k));
  for (int64_t bt = 0; bt < c.batch; ++bt) {
    const int64_t oa = bt * c.stride_a, ob = bt * c.stride_b, od = bt * c.stride_d;
    // op(A)[i, l] and op(B)[l, j], each as a contiguous run over l.
    for (int64_t i = 0; i < m; ++i)
      for (int64_t l = 0; l < k; ++l) {
        float x = read(a, c.type_a, oa + (c.trans_a ? l + i * c.lda : i + l * c.lda));
        ar[i * k + l] = tf32 ? round_tf32(x) : x;
      }
    for (int64_t j = 0; j < n; ++j)
      for (int64_t l = 0; l < k; ++l) {
        float x = read(b, c.type_b, ob + (c.trans_b ? j + l * c.ldb : l + j * c.ldb));
        bc[j * k + l] = tf32 ? round_tf32(x) : x;
      }
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        const float *x = ar.data() + i * k, *y = bc.data() + j * k;  // (k = 0: no element 0)
        float acc = 0;
        for (int64_t l = 0; l < k; ++l) acc += x[l] * y[l];
        int64_t at = od + i + j * c.ldd;
        float v = c.alpha * acc;
        if (c.alpha == 1.0f) v = acc;
        if (c.beta != 0.0f) v += c.beta * read(d, c.type_d, at);
        int64_t ax = od + i + j * c.ld_aux;
        switch (c.epilogue) {
          case E::Bias:
            v = v + read(bias, c.type_bias, i);
            break;
          case E::Gelu:
            v = kir::detail::gelu(v);
            break;
          case E::GeluAux:
            write(aux, c.type_aux, ax, v);
            v = kir::detail::gelu(v);
            break;
          case E::GeluBias:
            v = kir::detail::gelu(v + read(bias, c.type_bias, i));
            break;
          case E::GeluAuxBias:
            v = v + read(bias, c.type_bias, i);
            write(aux, c.type_aux, ax, v);
            v = kir::detail::gelu(v);
            break;
          case E::DGelu:
            v = v * kir::detail::gelu_grad(read(aux, c.type_aux, ax));
            break;
          default:
            break;
        }
        write(d, c.type_d, at, v);
      }
    if (c.epilogue == E::BgradA) {
      SX_ASSERT(bias_grad, "a BGRADA epilogue without its output");
      for (int64_t i = 0; i < m; ++i) {
        float s = 0;
        for (int64_t l = 0; l < k; ++l) s += ar[i * k + l];
        write(bias_grad, kir::Type::f32, bt * m + i, s);
      }
    }
  }
}

}  // namespace sx::cuda
