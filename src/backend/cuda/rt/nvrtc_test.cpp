#include "backend/cuda/rt/nvrtc.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace sx::cuda {
namespace {

// Two kernels in one program, as generated programs batch them.
constexpr const char* kTwoKernels = R"(
extern "C" __global__ void scale(float* out, const float* in, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * in[i];
}
extern "C" __global__ void row_sum(float* out, const float* in, int cols) {
  __shared__ float partial[32];
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += in[blockIdx.x * cols + c];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.f;
    for (int w = 0; w < (int)(blockDim.x >> 5); ++w) t += partial[w];
    out[blockIdx.x] = t;
  }
}
)";

const Nvrtc* nvrtc_or_skip() { return nvrtc().library; }
#define REQUIRE_NVRTC()               \
  const Nvrtc* lib = nvrtc_or_skip(); \
  if (lib == nullptr) GTEST_SKIP() << "NVRTC not found: " << nvrtc().failure;

TEST(PtxasReport, ReadsEachEntry) {
  const char* log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'scale' for 'sm_90'\n"
      "ptxas info    : Function properties for scale\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 8 registers, used 0 barriers, 372 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function '_Z3bigPf' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z3bigPf\n"
      "    48 bytes stack frame, 40 bytes spill stores, 36 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 128 bytes smem, 360 bytes cmem[0]\n";
  auto k = parse_ptxas_report(log);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].name, "scale");
  EXPECT_EQ(k[0].registers, 8);
  EXPECT_EQ(k[0].spill_store_bytes, 0);
  EXPECT_EQ(k[1].name, "_Z3bigPf");
  EXPECT_EQ(k[1].registers, 255);
  EXPECT_EQ(k[1].stack_bytes, 48);
  EXPECT_EQ(k[1].spill_store_bytes, 40);
  EXPECT_EQ(k[1].spill_load_bytes, 36);
  EXPECT_EQ(k[1].shared_bytes, 128);
}

TEST(NvrtcLoad, NotFoundIsAValue) {
  auto s = load_nvrtc({"/nonexistent/libnvrtc.so.13", "libnvrtc-not-a-library.so.13"});
  EXPECT_EQ(s.library, nullptr);
  EXPECT_NE(s.failure.find("/nonexistent/libnvrtc.so.13"), std::string::npos) << s.failure;
  EXPECT_NE(s.failure.find("libnvrtc-not-a-library.so.13"), std::string::npos) << s.failure;
}

TEST(NvrtcLoad, ALibraryWithoutTheEntryPointsIsRefused) {
  // libc loads but is not NVRTC.
  auto s = load_nvrtc({"libc.so.6"});
  EXPECT_EQ(s.library, nullptr);
  EXPECT_NE(s.failure.find("it lacks nvrtc"), std::string::npos) << s.failure;
}

TEST(NvrtcLoad, DefaultCandidatesStartWithTheLoaderPath) {
  auto c = default_nvrtc_candidates();
  ASSERT_GE(c.size(), 2u);
  EXPECT_EQ(c[0], "libnvrtc.so.13");
  EXPECT_EQ(c[1], "/usr/local/cuda/lib64/libnvrtc.so.13");
}

class NvrtcArch : public ::testing::TestWithParam<const char*> {};

TEST_P(NvrtcArch, CompilesTwoKernelsWithoutSpills) {
  REQUIRE_NVRTC();
  EXPECT_GE(lib->major(), 12);
  auto out = lib->compile(kTwoKernels, "two-kernels", GetParam());
  ASSERT_TRUE(out.ok) << out.program.log;
  ASSERT_GE(out.program.cubin.size(), 4u);
  EXPECT_EQ(std::string(out.program.cubin.begin(), out.program.cubin.begin() + 4),
            "\x7f"
            "ELF");
  ASSERT_EQ(out.program.kernels.size(), 2u) << out.program.log;
  for (const auto& k : out.program.kernels) {
    EXPECT_TRUE(k.name == "scale" || k.name == "row_sum") << k.name;
    EXPECT_GT(k.registers, 0) << k.name;
    EXPECT_LE(k.registers, 64) << k.name;
    EXPECT_EQ(k.spill_store_bytes, 0) << k.name;
    EXPECT_EQ(k.spill_load_bytes, 0) << k.name;
    EXPECT_EQ(k.stack_bytes, 0) << k.name;
  }
  EXPECT_NE(out.program.log.find(std::string("for '") + GetParam() + "'"), std::string::npos) << out.program.log;
}

INSTANTIATE_TEST_SUITE_P(Archs, NvrtcArch, ::testing::Values("sm_90", "sm_80"));

TEST(Nvrtc, ASyntaxErrorComesBackWithTheLog) {
  REQUIRE_NVRTC();
  const char* bad = "extern \"C\" __global__ void k(float* p) { p[0] = undefined_name; }\n";
  auto out = lib->compile(bad, "bad-program", "sm_90");
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.program.cubin.empty());
  EXPECT_NE(out.program.log.find("undefined_name"), std::string::npos) << out.program.log;
  try {
    compile_or_throw(*lib, bad, "bad-program", "sm_90");
    FAIL() << "expected E-DEV-031";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), Code::DEV_031);
    EXPECT_NE(std::string(e.what()).find("bad-program for sm_90"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("undefined_name"), std::string::npos) << e.what();
  }
}

TEST(Nvrtc, AnUnknownArchitectureFails) {
  REQUIRE_NVRTC();
  auto out = lib->compile(kTwoKernels, "two-kernels", "sm_1");
  EXPECT_FALSE(out.ok);
  EXPECT_FALSE(out.program.log.empty());
}

}  // namespace
}  // namespace sx::cuda
