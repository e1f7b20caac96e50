// RealGpu over the fake libcuda (fake_libcuda.cpp: host memory, a host
// "kernel"): the memory, staging, launch and graph paths and the error
// mapping, without a GPU. cuBLASLt's products need a driver: only their
// refusal is tested here; scripts/gpu_check.sh runs them on a GPU.
#include "backend/cuda/driver/real_gpu.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <numeric>

namespace sx::cuda {
namespace {

const DriverApi& fake_driver() {
  static const DriverLibrary lib = load_driver({SEXPGPU_FAKE_LIBCUDA});
  EXPECT_TRUE(lib.api != nullptr) << lib.failure;
  return *lib.api;
}

CudaDeviceInfo fake_device() {
  CudaDeviceInfo d;
  d.name = "Fake GPU", d.compute_capability = 90, d.total_bytes = uint64_t{80} << 30;
  return d;
}

template <typename F>
std::pair<Code, std::string> error_of(F f) {
  try {
    f();
  } catch (const UserError& e) {
    return {e.code(), e.diagnostics().front().message};
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(RealGpu, UploadsDownloadsCopiesAndSetsThroughTheStream) {
  auto gpu = make_real_gpu(fake_driver(), nullptr, fake_device());
  EXPECT_EQ(gpu->name(), "Fake GPU");
  EXPECT_EQ(gpu->arch(), "sm_90");
  EXPECT_EQ(gpu->free_memory(), int64_t{79} << 30);
  std::vector<float> host(1000);
  std::iota(host.begin(), host.end(), 0.5f);
  DevicePtr a = gpu->alloc(4000), b = gpu->alloc(4000);
  gpu->upload(a, host.data(), 4000);
  host.assign(1000, -1);  // the caller's memory is free once upload returns
  gpu->copy(b, a, 4000);
  gpu->memset(b, 0, 8);
  std::vector<float> back(1000);
  gpu->download(back.data(), b, 4000);
  EXPECT_EQ(back[0], 0.0f);
  EXPECT_EQ(back[1], 0.0f);
  EXPECT_EQ(back[2], 2.5f);
  EXPECT_EQ(back[999], 999.5f);
  EXPECT_EQ(gpu->peak_allocated(), 8000);
  gpu->free(a);
  DevicePtr c = gpu->alloc(100);
  EXPECT_EQ(gpu->peak_allocated(), 8000);
  gpu->free(b), gpu->free(c);
}

// For NCCL's copies back: queued, and in place only once the stream says it is idle.
TEST(RealGpu, AsyncDownloadsArriveWhenTheStreamIsIdle) {
  setenv("FAKE_CUDA_BUSY_QUERIES", "2", 1);  // read by the fake at its first cuStreamQuery
  auto gpu = make_real_gpu(fake_driver(), nullptr, fake_device());
  EXPECT_NE(gpu->stream_handle(), nullptr);
  std::vector<float> host(8, 3.0f), back(8, 0.0f);
  DevicePtr p = gpu->alloc(32);
  gpu->upload(p, host.data(), 32);
  gpu->download_async(back.data(), p, 32);
  EXPECT_FALSE(gpu->idle());
  EXPECT_FALSE(gpu->idle());
  EXPECT_EQ(back, std::vector<float>(8, 0.0f)) << "moved before the stream finished";
  EXPECT_TRUE(gpu->idle());
  EXPECT_EQ(back, host);
  std::vector<float> big(1 << 16, 5.0f), big_back(big.size());  // past the first buffer: it grows
  DevicePtr q = gpu->alloc(static_cast<int64_t>(big.size()) * 4);
  gpu->upload(q, big.data(), static_cast<int64_t>(big.size()) * 4);
  gpu->download_async(back.data(), p, 32);
  gpu->download_async(big_back.data(), q, static_cast<int64_t>(big.size()) * 4);
  EXPECT_TRUE(gpu->idle());
  EXPECT_EQ(big_back, big);
}

TEST(RealGpu, UploadsLargerThanTheStagingGoThroughItInTurns) {
  auto gpu = make_real_gpu(fake_driver(), nullptr, fake_device());
  const int64_t n = (kStagingBytes + kStagingBytes / 2) / 4 + 3;  // one and a half times the ring, and a bit
  std::vector<float> host(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 8191);
  DevicePtr p = gpu->alloc(n * 4);
  gpu->upload(p, host.data(), 4000);  // the ring partly used first
  gpu->upload(p + 4000, host.data() + 1000, (n - 1000) * 4);
  std::vector<float> back(static_cast<size_t>(n));
  gpu->download(back.data(), p, n * 4);
  EXPECT_EQ(back, host);
  gpu->free(p);
}

TEST(RealGpu, OutOfMemoryNamesTheSizesAndTheFix) {
  setenv("FAKE_CUDA_ALLOC_LIMIT", "4096", 1);
  auto gpu = make_real_gpu(fake_driver(), nullptr, fake_device());
  auto [code, message] = error_of([&] { gpu->alloc(1 << 20); });
  unsetenv("FAKE_CUDA_ALLOC_LIMIT");
  EXPECT_EQ(code, Code::DEV_007);
  EXPECT_NE(message.find("cuMemAlloc of 1.00 MiB on Fake GPU: out of memory"), std::string::npos) << message;
}

TEST(RealGpu, LaunchesPassBuffersAndScalarsAsTheKernelReadsThem) {
  auto gpu = make_real_gpu(fake_driver(), nullptr, fake_device());
  Program program;
  program.cubin = {'F', 'A', 'K', 'E'};
  ProgramHandle prog = gpu->load_program(program);
  KernelHandle k = gpu->kernel(prog, "add_scaled");
  std::vector<float> host(16, 1.0f);
  DevicePtr p = gpu->alloc(64);
  gpu->upload(p, host.data(), 64);
  KernelCall call;
  call.handle = k, call.grid = 1, call.block = 16;
  call.buffers = {p};
  std::vector<uint64_t> words = scalar_words({Scalar::u64(16), Scalar::f32(0.5f)});
  call.scalars = gpu->alloc(16);
  gpu->upload(call.scalars, words.data(), 16);
  gpu->launch(call);
  gpu->download(host.data(), p, 64);
  EXPECT_EQ(host[0], 1.0f);
  EXPECT_EQ(host[15], 1.0f + 0.5f * 15);
  auto [code, message] = error_of([&] { gpu->kernel(prog, "no_such_kernel"); });
  EXPECT_EQ(code, Code::DEV_007);
  EXPECT_NE(message.find("the CUDA call cuModuleGetFunction failed: CUDA error 500"), std::string::npos) << message;
}

TEST(RealGpu, ACubinTheDriverCannotLoadIsNamed) {
  auto gpu = make_real_gpu(fake_driver(), nullptr, fake_device());
  Program program;
  program.cubin = {1, 2, 3, 4};
  auto [code, message] = error_of([&] { gpu->load_program(program); });
  EXPECT_EQ(code, Code::DEV_007);
  EXPECT_NE(message.find("cuModuleLoadData failed: CUDA_ERROR_NO_BINARY_FOR_GPU (209)"), std::string::npos) << message;
}

TEST(RealGpu, CapturedGraphsAreReplayedByHandle) {
  auto gpu = make_real_gpu(fake_driver(), nullptr, fake_device());
  gpu->begin_capture();
  GraphExecHandle g = gpu->end_capture();
  EXPECT_EQ(g, 0);
  gpu->replay(g);
  gpu->synchronize();
}

TEST(RealGpu, ProductsNeedCublasLt) {
  auto gpu = make_real_gpu(fake_driver(), nullptr, fake_device());
  GemmCall call;
  call.desc.m = call.desc.n = call.desc.k = 4;
  auto [code, message] = error_of([&] { gpu->gemm(call); });
  EXPECT_EQ(code, Code::DEV_005);
}

TEST(RealGpu, WithoutADriverCublasLtRefusesItsHandle) {
  if (cublaslt().api == nullptr) GTEST_SKIP() << "no cuBLASLt here";
#if defined(__SANITIZE_ADDRESS__)
  // cublasLtCreate without a driver leaks 192 bytes inside libcublasLt on its failure path (not ours to free).
  GTEST_SKIP() << "LeakSanitizer: cuBLASLt's own allocation on its failure path";
#endif
  auto gpu = make_real_gpu(fake_driver(), cublaslt().api.get(), fake_device());
  GemmCall call;
  call.desc.m = call.desc.n = call.desc.k = 4;
  call.desc.lda = call.desc.ldb = call.desc.ldd = 4;
  auto [code, message] = error_of([&] { gpu->gemm(call); });
  EXPECT_EQ(code, Code::DEV_007);
  EXPECT_NE(message.find("the cuBLASLt call cublasLtCreate failed"), std::string::npos) << message;
}

TEST(RealGpu, DriverErrorsAreCodedWithTheCall) {
  auto e = driver_call_error(nullptr, "cuLaunchKernel", 700);
  EXPECT_EQ(e.code(), Code::DEV_007);
  EXPECT_EQ(e.diagnostics().front().message, "the CUDA call cuLaunchKernel failed: CUDA error 700");
  auto oom = driver_call_error(nullptr, "cuMemAlloc", api::CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(oom.diagnostics().front().help.find(":microbatches"), std::string::npos);
  EXPECT_EQ(cublas_call_error(nullptr, "cublasLtMatmul", 13).diagnostics().front().message,
            "the cuBLASLt call cublasLtMatmul failed: cuBLAS status 13");
}

}  // namespace
}  // namespace sx::cuda
