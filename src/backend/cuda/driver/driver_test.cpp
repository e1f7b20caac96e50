#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "backend/cuda/driver/discovery.h"
#include "backend/cuda/rt/nvrtc.h"
#include "util/error.h"

namespace sx::cuda {
namespace {

// The refusal's code and message for a discovery.
std::pair<Code, std::string> refusal(const Discovery& d, const std::vector<int>& ordinals = {}) {
  try {
    require_cuda_devices(d, ordinals);
  } catch (const UserError& e) {
    return {e.code(), e.diagnostics().front().message};
  }
  ADD_FAILURE() << "not refused";
  return {};
}

// The fake driver (fake_libcuda.cpp) with the variables that describe its devices.
class FakeDriver : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* v : {"FAKE_CUDA_INIT_ERROR", "FAKE_CUDA_DEVICES", "FAKE_CUDA_CC", "FAKE_CUDA_DRIVER_VERSION"})
      unsetenv(v);
  }
  static Discovery discover_fake(bool with_free_memory = true) {
    auto lib = load_driver({SEXPGPU_FAKE_LIBCUDA});
    EXPECT_TRUE(lib.api != nullptr) << lib.failure;
    return discover(lib, with_free_memory);
  }
};

TEST(Driver, NoLibraryIsAValueThatNamesEachPlaceTried) {
  auto lib = load_driver({"/nonexistent/a/libcuda.so.1", "/nonexistent/b/libcuda.so.1"});
  EXPECT_TRUE(lib.api == nullptr);
  EXPECT_EQ(lib.failure, "no such file: /nonexistent/a/libcuda.so.1, /nonexistent/b/libcuda.so.1");
  Discovery d = discover(lib, true);
  EXPECT_EQ(d.outcome, Discovery::Outcome::no_driver);
  auto [code, message] = refusal(d);
  EXPECT_EQ(code, Code::DEV_002);
  EXPECT_NE(message.find("/nonexistent/b/libcuda.so.1"), std::string::npos) << message;
  auto line = describe_devices(d);
  EXPECT_FALSE(line.ok);
  EXPECT_NE(line.text.find("E-DEV-002"), std::string::npos) << line.text;
}

TEST(Driver, ALibraryWithoutTheEntryPointsIsNotTheDriver) {
  auto lib = load_driver({SEXPGPU_FAKE_LIBCUDA_MISSING});
  EXPECT_TRUE(lib.api == nullptr);
  EXPECT_NE(lib.failure.find("it lacks cuInit"), std::string::npos) << lib.failure;
}

TEST(Driver, TheToolkitStubIsNeverACandidate) {
  for (const auto& c : default_driver_candidates()) EXPECT_EQ(c.find("stubs"), std::string::npos) << c;
  EXPECT_EQ(default_driver_candidates().front(), "libcuda.so.1");
}

TEST(Driver, TheToolkitStubFailsCuInitWithItsName) {
#ifndef SEXPGPU_CUDA_STUBS_DIR
  GTEST_SKIP() << "built without the CUDA toolkit";
#else
  std::string stub = std::string(SEXPGPU_CUDA_STUBS_DIR) + "/libcuda.so";
  if (!std::filesystem::exists(stub)) GTEST_SKIP() << stub << " is not installed";
  auto lib = load_driver({stub});
  ASSERT_TRUE(lib.api != nullptr) << lib.failure;
  Discovery d = discover(lib, true);
  EXPECT_EQ(d.outcome, Discovery::Outcome::init_failed);
  EXPECT_NE(d.failure.find("cuInit: CUDA_ERROR_STUB_LIBRARY (34)"), std::string::npos) << d.failure;
  auto [code, message] = refusal(d);
  EXPECT_EQ(code, Code::DEV_003);
  EXPECT_NE(message.find("gives no CUDA device"), std::string::npos) << message;
#endif
}

TEST(Driver, ErrorTextsWithoutADriver) {
  EXPECT_EQ(driver_error_text(nullptr, 100), "CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected");
  EXPECT_EQ(driver_error_text(nullptr, 2), "CUDA_ERROR_OUT_OF_MEMORY (2)");
  EXPECT_EQ(driver_error_text(nullptr, 999), "CUDA error 999");
  EXPECT_EQ(cublas_status_text(nullptr, 7), "cuBLAS status 7");
  EXPECT_EQ(cuda_version_text(13000), "13.0");
  EXPECT_EQ(cuda_version_text(12040), "12.4");
}

TEST_F(FakeDriver, DiscoversDevicesWithFreeMemory) {
  setenv("FAKE_CUDA_DEVICES", "2", 1);
  Discovery d = discover_fake();
  ASSERT_EQ(d.outcome, Discovery::Outcome::ok) << d.failure;
  ASSERT_EQ(d.devices.size(), 2u);
  EXPECT_EQ(d.devices[1].ordinal, 1);
  EXPECT_EQ(d.devices[1].name, "Fake GPU");
  EXPECT_EQ(d.devices[1].arch(), "sm_90");
  EXPECT_EQ(d.devices[1].multiprocessors, 132);
  EXPECT_EQ(d.devices[1].total_bytes, uint64_t{80} << 30);
  EXPECT_EQ(d.devices[1].free_bytes, uint64_t{79} << 30);
  EXPECT_EQ(d.driver_version, 13000);
  auto line = describe_devices(d);
  EXPECT_TRUE(line.ok);
  EXPECT_NE(line.text.find("2 CUDA devices: 0 Fake GPU (sm_90, 132 SMs, 79.00 GiB free of 80.00 GiB); 1 Fake GPU"),
            std::string::npos)
      << line.text;
  EXPECT_NE(line.text.find(", CUDA 13.0"), std::string::npos) << line.text;
  EXPECT_EQ(discover_fake(false).devices[0].free_bytes, 0u);
}

TEST_F(FakeDriver, CuInitFailingIsNoDeviceWithTheDriversError) {
  setenv("FAKE_CUDA_INIT_ERROR", "100", 1);
  Discovery d = discover_fake();
  EXPECT_EQ(d.outcome, Discovery::Outcome::init_failed);
  auto [code, message] = refusal(d);
  EXPECT_EQ(code, Code::DEV_003);
  EXPECT_NE(message.find("cuInit: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected"), std::string::npos)
      << message;
  EXPECT_NE(describe_devices(d).text.find("E-DEV-003"), std::string::npos);
}

TEST_F(FakeDriver, NoDeviceCounted) {
  setenv("FAKE_CUDA_DEVICES", "0", 1);
  Discovery d = discover_fake();
  EXPECT_EQ(d.outcome, Discovery::Outcome::no_device);
  auto [code, message] = refusal(d);
  EXPECT_EQ(code, Code::DEV_003);
  EXPECT_NE(message.find("it counts 0 devices"), std::string::npos) << message;
}

TEST_F(FakeDriver, AnOldArchitectureIsRefused) {
  setenv("FAKE_CUDA_CC", "75", 1);
  Discovery d = discover_fake();
  auto [code, message] = refusal(d);
  EXPECT_EQ(code, Code::DEV_004);
  EXPECT_NE(message.find("CUDA device 0 (Fake GPU) is sm_75; this build's kernels need sm_80 or newer"),
            std::string::npos)
      << message;
  EXPECT_FALSE(describe_devices(d).ok);
}

TEST_F(FakeDriver, AnOldDriverIsRefused) {
  setenv("FAKE_CUDA_DRIVER_VERSION", "12040", 1);
  auto [code, message] = refusal(discover_fake());
  EXPECT_EQ(code, Code::DEV_004);
  EXPECT_NE(message.find("supports CUDA 12.4; this build's kernels need CUDA 13.0 or newer"), std::string::npos)
      << message;
}

TEST_F(FakeDriver, AnOrdinalTheDriverDoesNotHave) {
  setenv("FAKE_CUDA_DEVICES", "2", 1);
  Discovery d = discover_fake();
  auto [code, message] = refusal(d, {0, 2});
  EXPECT_EQ(code, Code::DEV_006);
  EXPECT_NE(message.find("SEXPGPU_DEVICES names CUDA device 2, but the driver has 2 (ordinals 0 to 1)"),
            std::string::npos)
      << message;
}

TEST_F(FakeDriver, AUsableDeviceIsChosenWhereTheLibrariesLoad) {
  Discovery d = discover_fake();
  if (cublaslt().api == nullptr || nvrtc().library == nullptr) GTEST_SKIP() << "no cuBLASLt or NVRTC here";
  auto chosen = require_cuda_devices(d, {0});
  ASSERT_EQ(chosen.size(), 1u);
  EXPECT_EQ(chosen[0].name, "Fake GPU");
}

TEST(CublasLt, LoadsFromTheToolkitWithEveryEntryPoint) {
#ifndef SEXPGPU_CUDA_STUBS_DIR
  GTEST_SKIP() << "built without the CUDA toolkit";
#else
  const auto& lt = cublaslt();
  ASSERT_TRUE(lt.api != nullptr) << lt.failure;
  EXPECT_GE(lt.api->get_version(), 130000u);
  // Without a driver cublasLtCreate fails, but descriptors can be built.
  api::cublasLtMatmulDesc_t desc = nullptr;
  ASSERT_EQ(lt.api->matmul_desc_create(&desc, api::CUBLAS_COMPUTE_32F, api::CUDA_R_32F), api::CUBLAS_STATUS_SUCCESS);
  int32_t t = api::CUBLAS_OP_T;
  EXPECT_EQ(lt.api->matmul_desc_set_attribute(desc, api::CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t),
            api::CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(lt.api->matmul_desc_destroy(desc), api::CUBLAS_STATUS_SUCCESS);
#endif
}

}  // namespace
}  // namespace sx::cuda
