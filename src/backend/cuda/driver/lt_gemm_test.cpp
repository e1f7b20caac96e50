#include "backend/cuda/driver/lt_gemm.h"

#include <gtest/gtest.h>

namespace sx::cuda {
namespace {

kir::Gemm product(int64_t m, int64_t n, int64_t k) {
  kir::Gemm g;
  g.m = m, g.n = n, g.k = k, g.lda = m, g.ldb = k, g.ldd = m;
  return g;
}

TEST(LtGemm, PlainProductIsColumnMajorAsStored) {
  LtGemm lt = lt_gemm(product(4, 3, 5));
  EXPECT_EQ(lt.compute, api::CUBLAS_COMPUTE_32F);
  EXPECT_EQ(lt.scale_type, api::CUDA_R_32F);
  EXPECT_EQ(lt.trans_a, api::CUBLAS_OP_N);
  EXPECT_EQ(lt.trans_b, api::CUBLAS_OP_N);
  EXPECT_EQ(lt.a.rows, 4u);
  EXPECT_EQ(lt.a.cols, 5u);
  EXPECT_EQ(lt.a.ld, 4);
  EXPECT_EQ(lt.b.rows, 5u);
  EXPECT_EQ(lt.b.cols, 3u);
  EXPECT_EQ(lt.b.ld, 5);
  EXPECT_EQ(lt.d.rows, 4u);
  EXPECT_EQ(lt.d.cols, 3u);
  EXPECT_EQ(lt.d.ld, 4);
  EXPECT_EQ(lt.epilogue, api::CUBLASLT_EPILOGUE_DEFAULT);
  EXPECT_FALSE(lt.needs_bias || lt.needs_aux || lt.needs_bias_grad);
}

TEST(LtGemm, TransposedOperandsAreStoredTransposed) {
  kir::Gemm g = product(4, 3, 5);
  g.trans_a = g.trans_b = true;
  g.lda = 5, g.ldb = 3;
  LtGemm lt = lt_gemm(g);
  EXPECT_EQ(lt.trans_a, api::CUBLAS_OP_T);
  EXPECT_EQ(lt.trans_b, api::CUBLAS_OP_T);
  EXPECT_EQ(lt.a.rows, 5u);
  EXPECT_EQ(lt.a.cols, 4u);
  EXPECT_EQ(lt.a.ld, 5);
  EXPECT_EQ(lt.b.rows, 3u);
  EXPECT_EQ(lt.b.cols, 5u);
  EXPECT_EQ(lt.b.ld, 3);
  EXPECT_EQ(lt.d.rows, 4u);
  EXPECT_EQ(lt.d.cols, 3u);
}

TEST(LtGemm, PrecisionsAndTypes) {
  kir::Gemm g = product(8, 8, 8);
  g.compute = kir::GemmCompute::tf32;
  EXPECT_EQ(lt_gemm(g).compute, api::CUBLAS_COMPUTE_32F_FAST_TF32);
  g.compute = kir::GemmCompute::bf16;
  g.type_a = g.type_b = g.type_d = kir::Type::bf16;
  LtGemm lt = lt_gemm(g);
  EXPECT_EQ(lt.compute, api::CUBLAS_COMPUTE_32F);  // bf16 operands, f32 accumulation
  EXPECT_EQ(lt.scale_type, api::CUDA_R_32F);
  EXPECT_EQ(lt.a.type, api::CUDA_R_16BF);
  EXPECT_EQ(lt.b.type, api::CUDA_R_16BF);
  EXPECT_EQ(lt.d.type, api::CUDA_R_16BF);
}

TEST(LtGemm, BatchesKeepTheirStridesAndASharedOperand) {
  kir::Gemm g = product(4, 3, 5);
  g.batch = 6, g.stride_a = 20, g.stride_b = 0, g.stride_d = 12;
  LtGemm lt = lt_gemm(g);
  EXPECT_EQ(lt.a.batch, 6);
  EXPECT_EQ(lt.a.stride, 20);
  EXPECT_EQ(lt.b.batch, 6);
  EXPECT_EQ(lt.b.stride, 0);
  EXPECT_EQ(lt.d.batch, 6);
  EXPECT_EQ(lt.d.stride, 12);
}

TEST(LtGemm, EveryEpilogueAndWhatItBinds) {
  struct Case {
    kir::GemmEpilogue e;
    int32_t lt;
    bool bias, aux, bias_grad;
  };
  using E = kir::GemmEpilogue;
  for (const Case& c : {Case{E::Default, api::CUBLASLT_EPILOGUE_DEFAULT, false, false, false},
                        Case{E::Bias, api::CUBLASLT_EPILOGUE_BIAS, true, false, false},
                        Case{E::Gelu, api::CUBLASLT_EPILOGUE_GELU, false, false, false},
                        Case{E::GeluAux, api::CUBLASLT_EPILOGUE_GELU_AUX, false, true, false},
                        Case{E::GeluBias, api::CUBLASLT_EPILOGUE_GELU_BIAS, true, false, false},
                        Case{E::GeluAuxBias, api::CUBLASLT_EPILOGUE_GELU_AUX_BIAS, true, true, false},
                        Case{E::DGelu, api::CUBLASLT_EPILOGUE_DGELU, false, true, false},
                        Case{E::BgradA, api::CUBLASLT_EPILOGUE_BGRADA, false, false, true}}) {
    kir::Gemm g = product(4, 3, 5);
    g.epilogue = c.e;
    g.type_aux = kir::Type::bf16;
    g.ld_aux = 4;
    LtGemm lt = lt_gemm(g);
    EXPECT_EQ(lt.epilogue, c.lt) << int(c.e);
    EXPECT_EQ(lt.needs_bias, c.bias) << int(c.e);
    EXPECT_EQ(lt.needs_aux, c.aux) << int(c.e);
    EXPECT_EQ(lt.needs_bias_grad, c.bias_grad) << int(c.e);
    EXPECT_EQ(lt.aux_type, api::CUDA_R_16BF);
    EXPECT_EQ(lt.aux_ld, 4);
    EXPECT_EQ(lt.aux_stride, 12);  // one m x n pre-activation per batch
  }
}

TEST(LtGemm, TheKeyIsTheDescriptorNotTheValuesBound) {
  kir::Gemm a = product(4, 3, 5), b = a;
  b.a = 17, b.d = 18;  // other graph values, the same product
  EXPECT_EQ(lt_gemm_key(a), lt_gemm_key(b));
  for (auto change : std::vector<void (*)(kir::Gemm&)>{
           [](kir::Gemm& g) { g.m = 8; }, [](kir::Gemm& g) { g.trans_b = true; }, [](kir::Gemm& g) { g.batch = 2; },
           [](kir::Gemm& g) { g.compute = kir::GemmCompute::tf32; },
           [](kir::Gemm& g) { g.epilogue = kir::GemmEpilogue::Bias; }, [](kir::Gemm& g) { g.beta = 1; },
           [](kir::Gemm& g) { g.type_d = kir::Type::bf16; }, [](kir::Gemm& g) { g.stride_b = 15; }}) {
    kir::Gemm c = a;
    change(c);
    EXPECT_NE(lt_gemm_key(a), lt_gemm_key(c)) << lt_gemm_key(c);
  }
}

}  // namespace
}  // namespace sx::cuda
