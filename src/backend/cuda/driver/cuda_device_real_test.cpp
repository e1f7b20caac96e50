// The CUDA device over the real GPU layer (RealGpu) and the fake libcuda:
// its kernels compiled by NVRTC, loaded as modules, looked up by name and
// launched with the grid and block the lowering chose, each argument the
// buffer or scalar the device bound, in the order the emulated device runs
// them. The fake runs no kernel: the numbers are scripts/gpu_check.sh's, on a
// GPU. Skipped where NVRTC is not found.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "autodiff/autodiff.h"
#include "backend/cuda/cuda_device.h"
#include "backend/cuda/driver/real_gpu.h"
#include "backend/cuda/rt/nvrtc.h"
#include "backend/device.h"
#include "graph/build.h"
#include "lang/experiment.h"

namespace sx::cuda {
namespace {

const DriverApi& fake_driver() {
  static const DriverLibrary lib = load_driver({SEXPGPU_FAKE_LIBCUDA});
  EXPECT_TRUE(lib.api != nullptr) << lib.failure;
  return *lib.api;
}

// The fake's own calls (dlopen of the same file gives the library load_driver loaded).
struct FakeControl {
  using Hook = void (*)(const char*, unsigned, unsigned, unsigned, void**, void*);
  void (*set_hook)(Hook, void*) = nullptr;
  void (*counts)(int*, int*) = nullptr;
  FakeControl() {
    void* lib = dlopen(SEXPGPU_FAKE_LIBCUDA, RTLD_NOW);
    EXPECT_TRUE(lib != nullptr) << dlerror();
    set_hook = reinterpret_cast<decltype(set_hook)>(dlsym(lib, "fake_cuda_set_launch_hook"));
    counts = reinterpret_cast<decltype(counts)>(dlsym(lib, "fake_cuda_counts"));
  }
};

// One launch: the kernel, its grid and block, its arguments as cuLaunchKernel's 8-byte slots.
struct Seen {
  std::string name;
  int64_t grid = 0, block = 0;
  std::vector<uint64_t> args;
  bool operator==(const Seen&) const = default;
};

struct Log {
  std::vector<Seen> made;       // what the device asked of the GPU
  std::vector<size_t> buffers;  // per launch made: how many of its arguments are buffers
  std::vector<KernelHandle> handles;
  std::vector<std::pair<DevicePtr, int64_t>> blocks;  // every allocation
  std::vector<Seen> reached;                          // what reached cuLaunchKernel
};

// gpu.h's calls passed on to another GPU, the allocations and launches logged.
class RecordingGpu final : public Gpu {
 public:
  RecordingGpu(std::unique_ptr<Gpu> inner, Log& log) : inner_(std::move(inner)), log_(log) {}
  std::string name() const override { return inner_->name(); }
  int64_t total_memory() const override { return inner_->total_memory(); }
  int64_t free_memory() const override { return inner_->free_memory(); }
  std::string arch() const override { return inner_->arch(); }
  bool interprets() const override { return inner_->interprets(); }
  DevicePtr alloc(int64_t bytes) override {
    DevicePtr p = inner_->alloc(bytes);
    log_.blocks.push_back({p, bytes});
    return p;
  }
  void free(DevicePtr p) override { inner_->free(p); }
  void upload(DevicePtr d, const void* s, int64_t n) override { inner_->upload(d, s, n); }
  void download(void* d, DevicePtr s, int64_t n) override { inner_->download(d, s, n); }
  void memset(DevicePtr d, uint8_t v, int64_t n) override { inner_->memset(d, v, n); }
  void copy(DevicePtr d, DevicePtr s, int64_t n) override { inner_->copy(d, s, n); }
  ProgramHandle load_program(const Program& p) override { return inner_->load_program(p); }
  KernelHandle kernel(ProgramHandle p, const std::string& n) override { return inner_->kernel(p, n); }
  void launch(const KernelCall& c) override {
    Seen s{c.kernel->name, c.grid, c.block, {}};
    for (DevicePtr p : c.buffers) s.args.push_back(p);
    if (c.scalars) s.args.push_back(c.scalars);
    log_.made.push_back(s);
    log_.buffers.push_back(c.buffers.size());
    log_.handles.push_back(c.handle);
    inner_->launch(c);
  }
  void gemm(const GemmCall& c) override { inner_->gemm(c); }
  void synchronize() override { inner_->synchronize(); }
  void begin_capture() override { inner_->begin_capture(); }
  GraphExecHandle end_capture() override { return inner_->end_capture(); }
  void replay(GraphExecHandle g) override { inner_->replay(g); }
  int64_t peak_allocated() const override { return inner_->peak_allocated(); }

 private:
  std::unique_ptr<Gpu> inner_;
  Log& log_;
};

// A training step with no product (cuBLASLt needs a driver): an embedding,
// a layer norm, the loss, and their gradients (a scatter-add, column sums).
struct Model {
  Graph g;
  Gradients grads;
  plan::Plan plan;
  std::vector<ParamInfo> params;
  Model() {
    using namespace ops;
    g.builtin_taps = false;
    NodeId tokens = input(g, "tokens", {2, 4}, DType::I32);
    NodeId targets = input(g, "targets", {2, 4}, DType::I32);
    NodeId table = param(g, "embed.w", {16, 8}, {Init::Normal, 0.5});
    NodeId gain = param(g, "ln.g", {8}, {Init::Ones});
    NodeId bias = param(g, "ln.b", {8}, {Init::Zeros});
    NodeId loss = cross_entropy(g, layer_norm(g, embed(g, tokens, table), gain, bias), targets);
    grads = backward(g, loss);
    std::vector<NodeId> outputs{loss};
    for (const auto& [path, id] : grads.params) outputs.push_back(id);
    plan = plan::make_plan(g, outputs);
    for (const auto& [path, id] : g.params()) params.push_back({path, g.node(id).shape, {}, {}});
  }
};

// One training step on `gpu`: the graph, the microbatch sum, the non-finite scan, the update.
void train_one_step(std::unique_ptr<Gpu> gpu, Log& log) {
  Model m;
  auto device = make_cuda_device_on(std::make_unique<RecordingGpu>(std::move(gpu), log), Precision::f32);
  OptimizerSpec spec;
  spec.kind = "adamw", spec.clip = 1.0, spec.weight_decay = 0.1;
  device->allocate(m.params, &spec);
  for (const auto& p : m.params) device->upload(p.path, std::vector<float>(size_t(p.shape.numel()), 0.25f));
  backend::GraphHandle h = device->load(m.g, m.plan, m.grads.params);
  std::vector<int32_t> ids{1, 2, 3, 4, 5, 6, 7, 0};
  device->run(h, {{"tokens", ids.data()}, {"targets", ids.data()}}, 7);
  device->accumulate_gradients(h, 0, 1);
  (void)device->first_nonfinite_gradient();
  device->update(1, 1e-3, false);
}

TEST(CudaDeviceOnRealGpu, CompilesLoadsAndLaunchesEveryKernelAsTheEmulatedDeviceDoes) {
  auto names = backend::device_names();  // the registry's device (and the base class's defaults, linked from it)
  ASSERT_NE(std::find(names.begin(), names.end(), "cuda"), names.end());
  if (nvrtc().library == nullptr) GTEST_SKIP() << "NVRTC not found: " << nvrtc().failure;
  auto cache = std::filesystem::temp_directory_path() / ("sx-real-gpu-cache-" + std::to_string(getpid()));
  std::filesystem::remove_all(cache);
  setenv("XDG_CACHE_HOME", cache.c_str(), 1);  // before the process's cache is first asked for

  FakeControl fake;
  ASSERT_TRUE(fake.set_hook && fake.counts);
  Log real;
  // cuLaunchKernel's arguments are read during the call, as many as the device passed.
  fake.set_hook(
      [](const char* name, unsigned grid, unsigned block, unsigned, void** args, void* user) {
        auto* log = static_cast<Log*>(user);
        Seen s{name, grid, block, {}};
        for (size_t i = 0; i < log->made.back().args.size(); ++i) {
          uint64_t v = 0;
          std::memcpy(&v, args[i], 8);  // RealGpu passes every argument from an 8-byte slot
          s.args.push_back(v);
        }
        log->reached.push_back(s);
      },
      &real);
  int modules0 = 0, functions0 = 0, modules = 0, functions = 0;
  fake.counts(&modules0, &functions0);
  CudaDeviceInfo info;
  info.name = "Fake GPU", info.compute_capability = 90, info.total_bytes = uint64_t{80} << 30;
  train_one_step(make_real_gpu(fake_driver(), nullptr, info), real);
  fake.set_hook(nullptr, nullptr);
  fake.counts(&modules, &functions);
  EXPECT_GE(modules - modules0, 2) << "the graph's kernels and the device's own, loaded as modules";
  EXPECT_GE(functions - functions0, static_cast<int>(real.made.size()) / 2);

  // What the device made is what reached the driver, argument for argument,
  // each launch with compiled code and each buffer in memory the device allocated.
  EXPECT_EQ(real.reached, real.made);
  ASSERT_FALSE(real.made.empty());
  for (size_t i = 0; i < real.made.size(); ++i) {
    EXPECT_GE(real.handles[i], 0) << real.made[i].name << ": launched without compiled code";
    for (size_t a = 0; a < real.buffers[i]; ++a) {
      uint64_t p = real.made[i].args[a];
      bool inside = false;
      for (const auto& [at, n] : real.blocks) inside = inside || (p >= at && p < at + static_cast<uint64_t>(n));
      EXPECT_TRUE(inside) << real.made[i].name << " buffer " << a;
    }
  }

  // The same step on the emulated device: the same kernels, grids, blocks and argument counts, in the same order.
  Log twin;
  train_one_step(make_emulated_gpu(1ll << 30), twin);
  ASSERT_EQ(twin.made.size(), real.made.size());
  for (size_t i = 0; i < twin.made.size(); ++i) {
    EXPECT_EQ(twin.made[i].name, real.made[i].name) << i;
    EXPECT_EQ(twin.made[i].grid, real.made[i].grid) << i;
    EXPECT_EQ(twin.made[i].block, real.made[i].block) << i;
    EXPECT_EQ(twin.made[i].args.size(), real.made[i].args.size()) << i;
  }
  // The step's own kernels, after the graph's: per parameter in path order.
  std::vector<std::string> tail;
  for (size_t i = real.made.size() - 8; i < real.made.size(); ++i) tail.push_back(real.made[i].name);
  EXPECT_EQ(tail,
            (std::vector<std::string>{"accumulate_gradient_f32_128", "accumulate_gradient_f32_8",
                                      "accumulate_gradient_f32_8", "nonfinite_scan_128", "nonfinite_scan_8",
                                      "nonfinite_scan_8", "optimizer_grad_norm", "optimizer_multi_tensor_update"}));
  std::filesystem::remove_all(cache);
}

}  // namespace
}  // namespace sx::cuda
