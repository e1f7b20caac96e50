// A fake libcuda for the tests: the driver API entry points sexpgpu binds,
// with devices described by variables (FAKE_CUDA_INIT_ERROR, FAKE_CUDA_DEVICES,
// FAKE_CUDA_CC, FAKE_CUDA_DRIVER_VERSION) and device memory that is host
// memory, so that discovery and the refusals are tested on a machine without
// a GPU. Not a mock of CUDA's semantics beyond that.
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>

namespace {
int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}
}  // namespace

extern "C" {
using R = int;
#ifndef FAKE_CUDA_WITHOUT_INIT
R cuInit(unsigned) { return env_int("FAKE_CUDA_INIT_ERROR", 0); }
#endif
R cuDriverGetVersion(int* v) {
  *v = env_int("FAKE_CUDA_DRIVER_VERSION", 13000);
  return 0;
}
R cuGetErrorName(R r, const char** s) {
  *s = r == 100 ? "CUDA_ERROR_NO_DEVICE" : nullptr;
  return *s ? 0 : 1;
}
R cuGetErrorString(R r, const char** s) {
  *s = r == 100 ? "no CUDA-capable device is detected" : nullptr;
  return *s ? 0 : 1;
}
R cuDeviceGetCount(int* n) {
  *n = env_int("FAKE_CUDA_DEVICES", 1);
  return 0;
}
R cuDeviceGet(int* d, int ordinal) {
  *d = ordinal;
  return ordinal < env_int("FAKE_CUDA_DEVICES", 1) ? 0 : 101;
}
R cuDeviceGetName(char* name, int len, int) {
  std::strncpy(name, "Fake GPU", len);
  return 0;
}
R cuDeviceTotalMem_v2(size_t* bytes, int) {
  *bytes = size_t{80} << 30;
  return 0;
}
R cuDeviceGetAttribute(int* v, int attr, int) {
  int cc = env_int("FAKE_CUDA_CC", 90);
  *v = attr == 75 ? cc / 10 : attr == 76 ? cc % 10 : attr == 16 ? 132 : 0;
  return 0;
}
R cuDevicePrimaryCtxRetain(void** ctx, int) {
  static int context;
  *ctx = &context;
  return 0;
}
R cuDevicePrimaryCtxRelease_v2(int) { return 0; }
R cuCtxSetCurrent(void*) { return 0; }
R cuCtxSynchronize() { return 0; }
R cuMemGetInfo_v2(size_t* free, size_t* total) {
  *total = size_t{80} << 30;
  *free = size_t{79} << 30;
  return 0;
}
R cuMemAlloc_v2(unsigned long long* p, size_t n) {
  if (n > static_cast<size_t>(env_int("FAKE_CUDA_ALLOC_LIMIT", 1 << 30))) return 2;
  *p = reinterpret_cast<unsigned long long>(std::malloc(n ? n : 1));
  return *p ? 0 : 2;
}
R cuMemFree_v2(unsigned long long p) {
  std::free(reinterpret_cast<void*>(p));
  return 0;
}
R cuMemHostAlloc(void** p, size_t n, unsigned) {
  *p = std::malloc(n ? n : 1);
  return *p ? 0 : 2;
}
R cuMemFreeHost(void* p) {
  std::free(p);
  return 0;
}
R cuMemcpyHtoDAsync_v2(unsigned long long d, const void* h, size_t n, void*) {
  std::memcpy(reinterpret_cast<void*>(d), h, n);
  return 0;
}
R cuMemcpyDtoHAsync_v2(void* h, unsigned long long d, size_t n, void*) {
  std::memcpy(h, reinterpret_cast<void*>(d), n);
  return 0;
}
R cuMemcpyDtoDAsync_v2(unsigned long long d, unsigned long long s, size_t n, void*) {
  std::memmove(reinterpret_cast<void*>(d), reinterpret_cast<void*>(s), n);
  return 0;
}
R cuMemsetD8Async(unsigned long long d, unsigned char v, size_t n, void*) {
  std::memset(reinterpret_cast<void*>(d), v, n);
  return 0;
}
// No cubin runs here. A module is an image starting "FAKE", whose one
// kernel, add_scaled(float* p, const u64* scalars) (p[i] += v * i for the
// scalars' words n, then v: gpu.h's scalar_words), is host
// code, so that a launch's arguments are checked as the kernel reads them;
// or an ELF image (NVRTC's cubin), whose functions run nothing: the test
// sees their launches through fake_cuda_set_launch_hook, and counts the
// modules and functions with fake_cuda_counts.
namespace {
void add_scaled(void** args) {
  float* p = reinterpret_cast<float*>(*static_cast<unsigned long long*>(args[0]));
  const unsigned long long* words =
      reinterpret_cast<const unsigned long long*>(*static_cast<unsigned long long*>(args[1]));
  unsigned long long n = words[0];
  float v;
  std::memcpy(&v, &words[1], sizeof v);
  for (unsigned long long i = 0; i < n; ++i) p[i] += v * static_cast<float>(i);
}
struct FakeFunction {
  std::string name;
  void (*host)(void**) = nullptr;
};
struct FakeModule {
  bool cubin = false;
  std::map<std::string, std::unique_ptr<FakeFunction>> functions;
};
using LaunchHook = void (*)(const char* name, unsigned grid, unsigned block, unsigned shared, void** args, void* user);
LaunchHook g_hook = nullptr;
void* g_hook_user = nullptr;
int g_modules = 0, g_functions = 0;
}  // namespace
void fake_cuda_set_launch_hook(LaunchHook hook, void* user) {
  g_hook = hook;
  g_hook_user = user;
}
void fake_cuda_counts(int* modules, int* functions) {
  *modules = g_modules;
  *functions = g_functions;
}
R cuModuleLoadData(void** m, const void* image) {
  bool fake = std::memcmp(image, "FAKE", 4) == 0, elf = std::memcmp(image,
                                                                    "\x7f"
                                                                    "ELF",
                                                                    4) == 0;
  if (!fake && !elf) return 209;
  auto* module = new FakeModule;
  module->cubin = elf;
  *m = module;
  ++g_modules;
  return 0;
}
R cuModuleUnload(void* m) {
  delete static_cast<FakeModule*>(m);
  return 0;
}
R cuModuleGetFunction(void** f, void* m, const char* name) {
  auto* module = static_cast<FakeModule*>(m);
  if (!module->cubin && std::strcmp(name, "add_scaled") != 0) return 500;
  auto& slot = module->functions[name];
  if (!slot) slot.reset(new FakeFunction{name, module->cubin ? nullptr : &add_scaled});
  *f = slot.get();
  ++g_functions;
  return 0;
}
R cuLaunchKernel(void* f, unsigned gx, unsigned, unsigned, unsigned bx, unsigned, unsigned, unsigned shared, void*,
                 void** args, void**) {
  auto* fn = static_cast<FakeFunction*>(f);
  if (fn->host) fn->host(args);
  if (g_hook) g_hook(fn->name.c_str(), gx, bx, shared, args, g_hook_user);
  return 0;
}
R cuStreamCreate(void** s, unsigned) {
  static int stream;
  *s = &stream;
  return 0;
}
R cuStreamDestroy_v2(void*) { return 0; }
R cuStreamSynchronize(void*) { return 0; }
// The first FAKE_CUDA_BUSY_QUERIES queries answer CUDA_ERROR_NOT_READY (600).
R cuStreamQuery(void*) {
  static int busy = env_int("FAKE_CUDA_BUSY_QUERIES", 0);
  return busy > 0 ? (--busy, 600) : 0;
}
R cuEventCreate(void** e, unsigned) {
  static int event;
  *e = &event;
  return 0;
}
R cuEventDestroy_v2(void*) { return 0; }
R cuEventRecord(void*, void*) { return 0; }
R cuEventSynchronize(void*) { return 0; }
R cuEventElapsedTime_v2(float* ms, void*, void*) {
  *ms = 0;
  return 0;
}
R cuStreamBeginCapture_v2(void*, int) { return 0; }
R cuStreamEndCapture(void*, void** g) {
  *g = nullptr;
  return 0;
}
R cuGraphInstantiateWithFlags(void** e, void*, unsigned long long) {
  *e = nullptr;
  return 0;
}
R cuGraphLaunch(void*, void*) { return 0; }
R cuGraphExecDestroy(void*) { return 0; }
R cuGraphDestroy(void*) { return 0; }
}
