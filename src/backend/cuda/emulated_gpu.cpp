// The emulated GPU (SEXPGPU_CUDA_EMULATE=1, and the tests): device memory is
// host memory, a launch is the kernel-IR interpreter over the launch's
// buffers, a GEMM the CPU GEMM with cuBLASLt's semantics. Calls run at once,
// in order (one stream); a captured graph records calls and runs them at
// each replay. It counts what a real device would say: memory in use and at
// its peak, against the pretend total.
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>

#include "backend/cuda/gemm_cpu.h"
#include "backend/cuda/gpu.h"
#include "backend/cuda/kir_interp.h"
#include "util/error.h"

namespace sx::cuda {

namespace {

constexpr int64_t kAlignment = 256;  // what cudaMalloc promises

void* host(DevicePtr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }

}  // namespace

class EmulatedGpu : public Gpu {
 public:
  explicit EmulatedGpu(int64_t memory) : total_(memory) {}
  ~EmulatedGpu() override {
    for (auto& [p, bytes] : blocks_) std::free(host(p));
  }

  std::string name() const override { return "emulated"; }
  int64_t total_memory() const override { return total_; }
  int64_t free_memory() const override { return total_ - in_use_; }
  std::string arch() const override { return "sm_90"; }
  bool interprets() const override { return true; }

  DevicePtr alloc(int64_t bytes) override {
    int64_t size = std::max<int64_t>(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
    if (in_use_ + size > total_)
      throw UserError(Code::DEV_040, {},
                      fmt::format("out of device memory: {} bytes asked, {} of {} free on the emulated device", bytes,
                                  total_ - in_use_, total_));
    void* p = std::aligned_alloc(kAlignment, static_cast<size_t>(size));
    SX_ASSERT(p, "the host has no memory for the emulated device");
    std::memset(p, 0, static_cast<size_t>(size));
    DevicePtr d = reinterpret_cast<uintptr_t>(p);
    blocks_[d] = size;
    in_use_ += size;
    peak_ = std::max(peak_, in_use_);
    return d;
  }
  void free(DevicePtr p) override {
    auto it = blocks_.find(p);
    SX_ASSERT(it != blocks_.end(), "free of memory the emulated device did not give");
    in_use_ -= it->second;
    std::free(host(p));
    blocks_.erase(it);
  }

  void upload(DevicePtr dst, const void* src, int64_t bytes) override {
    SX_ASSERT(!capturing_, "an upload inside a captured graph");
    if (bytes > 0) std::memcpy(host(dst), src, static_cast<size_t>(bytes));  // an empty tensor may have no data
  }
  void download(void* dst, DevicePtr src, int64_t bytes) override {
    SX_ASSERT(!capturing_, "a download inside a captured graph");
    if (bytes > 0) std::memcpy(dst, host(src), static_cast<size_t>(bytes));
  }
  void memset(DevicePtr dst, uint8_t value, int64_t bytes) override {
    if (bytes > 0) call([=] { std::memset(host(dst), value, static_cast<size_t>(bytes)); });  // as upload's
  }
  void copy(DevicePtr dst, DevicePtr src, int64_t bytes) override {
    if (bytes > 0) call([=] { std::memmove(host(dst), host(src), static_cast<size_t>(bytes)); });
  }

  ProgramHandle load_program(const Program& program) override {
    programs_.push_back(program);
    return static_cast<ProgramHandle>(programs_.size()) - 1;
  }
  KernelHandle kernel(ProgramHandle program, const std::string& name) override {
    const auto& names = programs_.at(static_cast<size_t>(program)).kernels;
    auto it = std::find(names.begin(), names.end(), name);
    SX_ASSERT(it != names.end(), "a kernel its program does not have");
    return static_cast<KernelHandle>(it - names.begin());
  }
  void launch(const KernelCall& c) override {
    SX_ASSERT(c.kernel, "an emulated launch needs its kernel");
    call([c] {
      std::vector<void*> buffers;
      for (DevicePtr p : c.buffers) buffers.push_back(host(p));
      // The words as they are in memory when the launch runs (a replay's, not its capture's).
      kir::interpret(*c.kernel, buffers, scalars_of(static_cast<const uint64_t*>(host(c.scalars)), c.kernel->scalars));
    });
  }
  void gemm(const GemmCall& c) override {
    call([c] { gemm_cpu(c.desc, host(c.a), host(c.b), host(c.d), host(c.bias), host(c.aux), host(c.bias_grad)); });
  }
  void synchronize() override {}

  void begin_capture() override {
    SX_ASSERT(!capturing_, "a capture inside a capture");
    capturing_ = true;
    graphs_.emplace_back();
  }
  GraphExecHandle end_capture() override {
    SX_ASSERT(capturing_, "end_capture without begin_capture");
    capturing_ = false;
    return static_cast<GraphExecHandle>(graphs_.size()) - 1;
  }
  void replay(GraphExecHandle graph) override {
    for (const auto& f : graphs_.at(static_cast<size_t>(graph))) f();
  }

  int64_t peak_allocated() const override { return peak_; }

 private:
  // Runs a call now, or records it while capturing.
  void call(std::function<void()> f) {
    if (capturing_)
      graphs_.back().push_back(std::move(f));
    else
      f();
  }

  int64_t total_, in_use_ = 0, peak_ = 0;
  std::map<DevicePtr, int64_t> blocks_;
  std::vector<Program> programs_;
  bool capturing_ = false;
  std::vector<std::vector<std::function<void()>>> graphs_;
};

std::unique_ptr<Gpu> make_emulated_gpu(int64_t memory_bytes) { return std::make_unique<EmulatedGpu>(memory_bytes); }

}  // namespace sx::cuda
