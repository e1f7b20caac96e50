#include "backend/cuda/driver/lt_gemm.h"

#include <fmt/format.h>

#include "util/error.h"

namespace sx::cuda {

int lt_data_type(kir::Type t) {
  switch (t) {
    case kir::Type::f32:
      return api::CUDA_R_32F;
    case kir::Type::bf16:
      return api::CUDA_R_16BF;
    case kir::Type::i32:
      break;
  }
  SX_ASSERT(false, "a GEMM operand is f32 or bf16");
  return api::CUDA_R_32F;
}

LtGemm lt_gemm(const kir::Gemm& g) {
  LtGemm out;
  out.compute = g.compute == kir::GemmCompute::tf32 ? api::CUBLAS_COMPUTE_32F_FAST_TF32 : api::CUBLAS_COMPUTE_32F;
  out.trans_a = g.trans_a ? api::CUBLAS_OP_T : api::CUBLAS_OP_N;
  out.trans_b = g.trans_b ? api::CUBLAS_OP_T : api::CUBLAS_OP_N;
  auto matrix = [&](kir::Type t, int64_t rows, int64_t cols, int64_t ld, int64_t stride) {
    LtMatrix m;
    m.type = lt_data_type(t);
    m.rows = static_cast<uint64_t>(rows);
    m.cols = static_cast<uint64_t>(cols);
    m.ld = ld;
    m.batch = static_cast<int32_t>(g.batch);
    m.stride = stride;
    return m;
  };
  // op(A) is m x k, op(B) is k x n, D is m x n.
  out.a = matrix(g.type_a, g.trans_a ? g.k : g.m, g.trans_a ? g.m : g.k, g.lda, g.stride_a);
  out.b = matrix(g.type_b, g.trans_b ? g.n : g.k, g.trans_b ? g.k : g.n, g.ldb, g.stride_b);
  out.d = matrix(g.type_d, g.m, g.n, g.ldd, g.stride_d);
  out.bias_type = lt_data_type(g.type_bias);
  out.aux_type = lt_data_type(g.type_aux);
  out.aux_ld = g.ld_aux;
  out.aux_stride = g.ld_aux * g.n;
  using E = kir::GemmEpilogue;
  switch (g.epilogue) {
    case E::Default:
      out.epilogue = api::CUBLASLT_EPILOGUE_DEFAULT;
      break;
    case E::Bias:
      out.epilogue = api::CUBLASLT_EPILOGUE_BIAS, out.needs_bias = true;
      break;
    case E::Gelu:
      out.epilogue = api::CUBLASLT_EPILOGUE_GELU;
      break;
    case E::GeluAux:
      out.epilogue = api::CUBLASLT_EPILOGUE_GELU_AUX, out.needs_aux = true;
      break;
    case E::GeluBias:
      out.epilogue = api::CUBLASLT_EPILOGUE_GELU_BIAS, out.needs_bias = true;
      break;
    case E::GeluAuxBias:
      out.epilogue = api::CUBLASLT_EPILOGUE_GELU_AUX_BIAS, out.needs_bias = out.needs_aux = true;
      break;
    case E::DGelu:
      out.epilogue = api::CUBLASLT_EPILOGUE_DGELU, out.needs_aux = true;
      break;
    case E::BgradA:
      out.epilogue = api::CUBLASLT_EPILOGUE_BGRADA, out.needs_bias_grad = true;
      break;
  }
  return out;
}

std::string lt_gemm_key(const kir::Gemm& g) {
  return fmt::format("{}{} m{} n{} k{} ld{},{},{} b{} s{},{},{} t{}{}{} c{} e{} bt{} at{} la{} beta{}", g.trans_a,
                     g.trans_b, g.m, g.n, g.k, g.lda, g.ldb, g.ldd, g.batch, g.stride_a, g.stride_b, g.stride_d,
                     int(g.type_a), int(g.type_b), int(g.type_d), int(g.compute), int(g.epilogue), int(g.type_bias),
                     int(g.type_aux), g.ld_aux, g.beta != 0);
}

}  // namespace sx::cuda
