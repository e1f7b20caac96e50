// The SIMT shim on hand-written kernels, and the same .cu texts compiled by
// NVRTC, so the shim runs what a GPU would.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>
#include <vector>

#include "backend/cuda/rt/nvrtc.h"
#include "simt_run.h"

namespace {

std::string kernel_path(const std::string& name) { return std::string(SIMT_KERNEL_DIR) + "/" + name; }

std::vector<float> ramp(size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * scale) + offset;
  return v;
}

constexpr simt::Order kOrders[] = {simt::Order::forward, simt::Order::reverse};

TEST(Simt, BlockReduction) {
  auto cu = simt::CudaOnCpu::compile(kernel_path("block_reduce.cu"));
  for (auto order : kOrders)
    for (int cols : {1, 37, 64, 200, 256}) {
      const int rows = 3;
      auto in = ramp(static_cast<size_t>(rows) * cols, 0.37f + 0.01f * cols, order == simt::Order::reverse);
      std::vector<float> out(rows, -1.0f);
      cu->launch("block_sum", {rows}, {256}, order, out.data(), static_cast<const float*>(in.data()), cols);
      for (int r = 0; r < rows; ++r) {
        double want = std::accumulate(in.begin() + r * cols, in.begin() + (r + 1) * cols, 0.0);
        EXPECT_NEAR(out[r], want, 1e-4) << "row " << r << " cols " << cols;
      }
    }
}

TEST(Simt, WarpShuffleSoftmaxRows) {
  auto cu = simt::CudaOnCpu::compile(kernel_path("softmax_row.cu"));
  for (auto order : kOrders) {
    const int rows = 5, cols = 70;  // 2 rows a block: the last block's second warp has no row
    auto in = ramp(static_cast<size_t>(rows) * cols, 0.71f, 0.0f);
    for (auto& v : in) v *= 4.0f;
    std::vector<float> out(in.size(), -1.0f);
    cu->launch("softmax_rows", {3}, {32, 2}, order, out.data(), static_cast<const float*>(in.data()), rows, cols);
    for (int r = 0; r < rows; ++r) {
      double m = *std::max_element(in.begin() + r * cols, in.begin() + (r + 1) * cols), s = 0;
      for (int c = 0; c < cols; ++c) s += std::exp(in[r * cols + c] - m);
      for (int c = 0; c < cols; ++c)
        ASSERT_NEAR(out[r * cols + c], std::exp(in[r * cols + c] - m) / s, 1e-6) << r << "," << c;
    }
  }
}

TEST(Simt, MissingBarrierShowsInReverseOrder) {
  auto cu = simt::CudaOnCpu::compile(kernel_path("missing_barrier.cu"));
  auto sum_of = [](const std::vector<float>& v) { return std::accumulate(v.begin(), v.end(), 0.0); };
  for (const char* kernel : {"last_thread_sum", "last_thread_sum_no_barrier"}) {
    auto a = ramp(256, 0.3f, 1.0f), b = ramp(256, 0.9f, 2.0f);  // new values each launch (see simt.h)
    float out = 0;
    cu->launch(kernel, {1}, {256}, simt::Order::forward, &out, static_cast<const float*>(a.data()));
    EXPECT_NEAR(out, sum_of(a), 1e-3) << kernel << ": thread order hides the missing barrier";
    cu->launch(kernel, {1}, {256}, simt::Order::reverse, &out, static_cast<const float*>(b.data()));
    if (std::string(kernel) == "last_thread_sum")
      EXPECT_NEAR(out, sum_of(b), 1e-3);
    else
      EXPECT_GT(std::fabs(out - sum_of(b)), 1.0) << "reverse order should expose the missing barrier";
  }
}

TEST(Simt, DivergentBarriersAreErrorsNotHangs) {
  auto cu = simt::CudaOnCpu::compile(kernel_path("divergent_barrier.cu"));
  std::vector<float> out(256);
  auto expect_error = [&](const char* kernel, auto... args) -> std::string {
    try {
      cu->launch(kernel, {2}, {64}, simt::Order::forward, args...);
    } catch (const simt::LaunchError& e) {
      return e.what();
    }
    ADD_FAILURE() << kernel << " ran to the end";
    return {};
  };
  auto early = expect_error("early_return_then_barrier", out.data(), 40);
  EXPECT_NE(early.find("divergent barrier in block (0,0,0)"), std::string::npos) << early;
  EXPECT_NE(early.find("40 threads (first 0) wait at __syncthreads (line 7)"), std::string::npos) << early;
  EXPECT_NE(early.find("24 threads (first 40) exited"), std::string::npos) << early;
  auto branches = expect_error("barrier_in_both_branches", out.data());
  EXPECT_NE(branches.find("divergent barrier: threads of block (0,0,0) reached __syncthreads on lines"),
            std::string::npos)
      << branches;
  auto half = expect_error("shuffle_in_half_a_warp", out.data());
  EXPECT_NE(half.find("deadlock in block (0,0,0)"), std::string::npos) << half;
  EXPECT_NE(half.find("16 threads (first 0) wait at __shfl_xor_sync"), std::string::npos) << half;
  // Every thread reaching the barrier is fine.
  cu->launch("early_return_then_barrier", {1}, {64}, simt::Order::reverse, out.data(), 64);
  EXPECT_EQ(out[63], 1.0f);
}

TEST(Simt, AMissingFileOrKernelIsAnError) {
  EXPECT_THROW(simt::CudaOnCpu::compile(kernel_path("no-such.cu")), std::runtime_error);
  auto cu = simt::CudaOnCpu::compile(kernel_path("block_reduce.cu"));
  float x = 0;
  EXPECT_THROW(cu->launch("no_such_kernel", {1}, {32}, simt::Order::forward, &x), std::runtime_error);
}

// The shim's kernels are CUDA: NVRTC compiles each file as it stands.
TEST(Simt, TheSameSourcesCompileWithNvrtc) {
  const auto& status = sx::cuda::nvrtc();
  if (status.library == nullptr) GTEST_SKIP() << "NVRTC not found: " << status.failure;
  for (const char* name : {"block_reduce.cu", "softmax_row.cu", "missing_barrier.cu", "divergent_barrier.cu"}) {
    std::ifstream in(kernel_path(name));
    std::stringstream text;
    text << in.rdbuf();
    auto out = status.library->compile(text.str(), name, "sm_90");
    EXPECT_TRUE(out.ok) << name << "\n" << out.program.log;
    for (const auto& k : out.program.kernels) EXPECT_EQ(k.spill_store_bytes, 0) << name << " " << k.name;
  }
}

}  // namespace
