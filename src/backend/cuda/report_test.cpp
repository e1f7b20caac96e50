// The lowering report's words for compiled kernels: the counts of the
// graph's line, and the registers (spills, stack) of each launch's line.
#include "backend/cuda/report.h"

#include <gtest/gtest.h>

namespace sx::cuda {
namespace {

Lowering three_launches() {
  Lowering l;
  l.nodes = 12;
  Launch gemm;
  gemm.kind = LaunchKind::Gemm, gemm.name = "cublaslt_nn_f32", gemm.domain = Shape{4, 4};
  gemm.gemm.m = gemm.gemm.n = gemm.gemm.k = 4;
  Launch row;
  row.kind = LaunchKind::Row, row.name = "row_softmax_0000abcd", row.domain = Shape{4, 4}, row.grid = 1,
  row.block = 256;
  Launch update = row;
  update.kind = LaunchKind::Optimizer, update.name = "optimizer_multi_tensor_update", update.domain = Shape{16};
  l.launches = {gemm, row, update};
  return l;
}

TEST(LoweringReport, SaysHowManyGeneratedLaunchesWereCachedAndCompiled) {
  Lowering l = three_launches();
  const int64_t gib = 1ll << 30;
  EXPECT_EQ(report_line("train-step", l, gib),
            "lowering train-step: 12 nodes -> 3 launches (1 cublas, 2 generated: not compiled) plan 1.00 GiB\n");
  CompiledLaunches c;
  c.compiled = 2;
  EXPECT_EQ(report_line("train-step", l, gib, &c),
            "lowering train-step: 12 nodes -> 3 launches (1 cublas, 2 generated: 2 compiled) plan 1.00 GiB\n");
  c.cached = 2, c.compiled = 0;
  EXPECT_EQ(report_line("eval", l, gib, &c),
            "lowering eval: 12 nodes -> 3 launches (1 cublas, 2 generated: 2 cached) plan 1.00 GiB\n");
  c.cached = 1, c.compiled = 1;
  EXPECT_EQ(report_line("eval", l, gib, &c),
            "lowering eval: 12 nodes -> 3 launches (1 cublas, 2 generated: 1 cached, 1 compiled) plan 1.00 GiB\n");
}

TEST(LoweringReport, EachCompiledLaunchShowsItsRegistersAndAnySpills) {
  Graph g;
  Lowering l = three_launches();
  std::string plain = kernel_lines(g, l);
  EXPECT_EQ(plain.find("registers"), std::string::npos) << plain;
  CompiledLaunches c;
  c.resources.resize(3);
  c.resources[1] = {"row_softmax_0000abcd", 40};
  c.resources[2] = {"optimizer_multi_tensor_update", 30, 8, 4, 16};
  std::string lines = kernel_lines(g, l, &c);
  EXPECT_EQ(
      lines,
      "    0 cublaslt_nn_f32 batch 1x1 m4 n4 k4 f32[4,4] -\n"
      "    1 row_softmax_0000abcd grid 1x256 f32[4,4] - 40 registers\n"
      "    2 optimizer_multi_tensor_update grid 1x256 f32[16] - 30 registers, spills 8+4 bytes, stack 16 bytes\n");
}

}  // namespace
}  // namespace sx::cuda
