#pragma once
// cuBLASLt's matmul on the CPU, for the emulated GPU: column-major operands
// with the descriptor's transposes, leading dimensions and strided batches,
// the epilogues (bias, GELU with the pre-activation in aux, d GELU, the bias
// gradient of A), tf32 operands rounded to 10 mantissa bits, bf16 operands
// widened, f32 accumulation in k order from 0 (the reference's order, so an
// f32 product has its bits), the output rounded to bf16 when it is bf16.
#include "backend/cuda/kir.h"

namespace sx::cuda {

void gemm_cpu(const kir::Gemm& c, const void* a, const void* b, void* d, const void* bias, void* aux, void* bias_grad);

// An f32 rounded to tf32 (10 mantissa bits, to nearest, ties away from zero:
// cvt.rna.tf32.f32). cuBLAS does not document the rounding of
// CUBLAS_COMPUTE_32F_FAST_TF32; a TF32 product on an RTX 3090 gives
// 1024.5 x 1 = 1025 (pytorch#53635): the tie went up, not to even (1024) and
// not truncated (1024), which is what rna does.
float round_tf32(float x);

}  // namespace sx::cuda
