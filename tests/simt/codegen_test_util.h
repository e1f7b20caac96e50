#pragma once
// What the tests of generated CUDA text share: the text written to a .cu file
// and compiled for the SIMT shim, inputs, bf16 bits, and comparisons.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "backend/ref/kernels.h"
#include "simt_run.h"

namespace sx::cuda::test {

inline constexpr simt::Order kOrders[] = {simt::Order::forward, simt::Order::reverse};

// `source` written to a file named by `name` under the test's temporary
// folder, compiled once per process for the shim.
inline std::shared_ptr<simt::CudaOnCpu> compile_on_cpu(const std::string& name, const std::string& source) {
  auto path = std::filesystem::path(::testing::TempDir()) / ("sx-" + std::to_string(getpid()) + "-" + name + ".cu");
  if (!std::filesystem::exists(path)) {
    std::ofstream(path) << source;
  }
  return simt::CudaOnCpu::compile(path.string());
}

// Values in [-scale, scale] + offset, different for each seed.
inline std::vector<float> values(size_t n, uint32_t seed, float scale = 1.0f, float offset = 0.0f) {
  std::vector<float> v(n);
  uint64_t s = 0x9e3779b97f4a7c15ull * (seed + 1);
  for (auto& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = offset + scale * (static_cast<float>((s >> 40) & 0xffffff) / 8388608.0f - 1.0f);
  }
  return v;
}

inline std::vector<uint16_t> to_bf16(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    float r = ref::round_bf16(v[i]);
    uint32_t b;
    std::memcpy(&b, &r, 4);
    out[i] = static_cast<uint16_t>(b >> 16);
  }
  return out;
}
inline std::vector<float> from_bf16(const std::vector<uint16_t>& v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t b = static_cast<uint32_t>(v[i]) << 16;
    std::memcpy(&out[i], &b, 4);
  }
  return out;
}
inline std::vector<float> rounded_bf16(std::vector<float> v) {
  for (auto& x : v) x = ref::round_bf16(x);
  return v;
}

// Each element within `rel` of the reference, relative to its magnitude or,
// for elements near zero, to a hundredth of the largest (sums that cancel).
inline void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rel,
                         const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double largest = 0;
  for (float w : want) largest = std::max(largest, static_cast<double>(std::fabs(w)));
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double tol = rel * std::max(static_cast<double>(std::fabs(want[i])), 1e-2 * largest) + 1e-30;
    bool ok = std::isnan(want[i]) ? std::isnan(got[i]) : std::fabs(got[i] - want[i]) <= tol;
    if (!ok && reported++ < 5) ADD_FAILURE() << what << "[" << i << "]: " << got[i] << " vs " << want[i];
  }
}

}  // namespace sx::cuda::test
