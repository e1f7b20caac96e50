// The CUDA device (cuda_device.h): backend::Device over a Gpu.
#include "backend/cuda/cuda_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <utility>

#include "backend/cuda/cuda_device_kernels.h"
#include "backend/cuda/cuda_graph.h"
#include "backend/cuda/kir_interp.h"
#include "backend/cuda/report.h"
#include "graph/params.h"
#include "lang/experiment.h"
#include "util/environment.h"
#include "util/error.h"

namespace sx::cuda {

namespace {

using kir::Reg;

bool g_capture_graphs = true;

// A kernel over one f32 vector of n elements: the pieces the device's own kernels share.
struct SmallKernel {
  kir::Kernel k;
  explicit SmallKernel(const std::string& name, int64_t n) {
    k.kind = LaunchKind::Map, k.name = name;
    k.spaces = {Shape{n}, Shape{1}};
    k.block = 256, k.grid = std::max<int64_t>(1, (n + 1023) / 1024);
  }
  int buffer(kir::Source src, const std::string& path, kir::Type t, int64_t n) {
    kir::Buffer b;
    b.name = "b" + std::to_string(k.buffers.size());
    b.source = src, b.path = path, b.type = t, b.shape = Shape{n}, b.read = true;
    k.buffers.push_back(b);
    return static_cast<int>(k.buffers.size()) - 1;
  }
  Reg stmt(kir::Stmt s, kir::RegType t) {
    s.out = static_cast<Reg>(k.regs.size());
    k.regs.push_back({t, s.space});
    k.body.push_back(std::move(s));
    return s.out;
  }
  // `stride` 0: the buffer's one element, read by every thread.
  Reg load(int buffer, int64_t n, int64_t stride = 1) {
    kir::Stmt s;
    s.kind = kir::StmtKind::Load, s.access.buffer = buffer, s.access.view = Shape{n}, s.access.stride[0] = stride;
    return stmt(std::move(s), kir::RegType::f32);
  }
  Reg op(kir::StmtKind kind, Op o, std::vector<Reg> args, int space, kir::RegType t = kir::RegType::f32) {
    kir::Stmt s;
    s.kind = kind, s.op = o, s.args = std::move(args), s.space = space;
    return stmt(std::move(s), t);
  }
  Reg constant(double v) {
    kir::Stmt s;
    s.kind = kir::StmtKind::Const, s.value = v, s.space = 1;
    return stmt(std::move(s), kir::RegType::f32);
  }
  void store(int buffer, Reg r, int64_t n, int64_t offset = 0) {
    kir::Stmt s;
    s.kind = kir::StmtKind::Store, s.args = {r}, s.space = k.regs[r].space, s.access.buffer = buffer;
    s.access.view = Shape{n}, s.access.stride[0] = 1, s.access.offset = offset;
    k.buffers[static_cast<size_t>(buffer)].written = true;
    k.body.push_back(std::move(s));
  }
};

// One element stored as `t` at `p`, as an output of a float (`float_out`) or
// an integer dtype holds it: ref::Tensor's f or i.
struct Element {
  float f = 0;
  int32_t i = 0;
};
Element element_at(kir::Type t, const uint8_t* p, bool float_out) {
  Element e;
  if (t == kir::Type::i32) {
    int32_t v;
    std::memcpy(&v, p, 4);
    if (float_out)
      e.f = static_cast<float>(v);
    else
      e.i = v;
    return e;
  }
  float v;
  if (t == kir::Type::bf16) {
    uint16_t h16;
    std::memcpy(&h16, p, 2);
    v = kir::from_bf16_bits(h16);
  } else {
    std::memcpy(&v, p, 4);
  }
  if (float_out)
    e.f = v;
  else
    e.i = static_cast<int32_t>(v);
  return e;
}

// A kernel of the device's own (not a graph's) and its compiled code, when the GPU runs code.
struct DeviceKernel {
  kir::Kernel k;
  KernelHandle handle = -1;
};

struct ParamMemory {
  int64_t elements = 0;
  DevicePtr master = 0, grad = 0, copy = 0;
};

class CudaDevice : public backend::Device, public CudaReport {
 public:
  CudaDevice(std::unique_ptr<Gpu> gpu, Precision precision, const Nvrtc* nvrtc)
      : gpu_(std::move(gpu)), precision_(precision), nvrtc_(nvrtc) {}
  ~CudaDevice() override {
    for (auto& [path, m] : params_)
      for (DevicePtr p : {m.master, m.grad, m.copy})
        if (p) gpu_->free(p);
    for (auto& [name, p] : state_) gpu_->free(p);
    for (auto& l : graphs_) {
      gpu_->free(l.arena);
      if (l.scalars) gpu_->free(l.scalars);
    }
    if (words_) gpu_->free(words_);
    if (kept_at_) gpu_->free(kept_at_);
    if (flags_) gpu_->free(flags_);
    if (norms_) gpu_->free(norms_);
    if (scale_) gpu_->free(scale_);
  }

  std::string_view name() const override { return "cuda"; }
  const std::vector<LoadedLowering>& lowerings() const override { return lowerings_; }
  const Gpu& gpu() const override { return *gpu_; }
  Gpu& gpu_for_collectives() { return *gpu_; }
  std::optional<KernelCounters> kernel_counters() const override {
    if (!nvrtc_) return std::nullopt;
    return tally_;
  }
  GraphCounters graph_counters() const override { return graphs_tally_; }

  void allocate(const std::vector<ParamInfo>& params, const OptimizerSpec* optimizer) override {
    param_infos_ = params;
    for (const auto& p : params) {
      ParamMemory& m = params_[p.path];
      m.elements = p.shape.numel();
      m.master = gpu_->alloc(m.elements * 4);
      m.grad = gpu_->alloc(m.elements * 4);
    }
    flags_ = gpu_->alloc(static_cast<int64_t>(params.size()) * 4);
    norms_ = gpu_->alloc(static_cast<int64_t>(params.size() + 1) * 8);
    scale_ = gpu_->alloc(4);
    words_ = gpu_->alloc(kStepWords * 8);
    if (!optimizer) return;
    spec_ = *optimizer;
    has_optimizer_ = true;
    for (const auto& p : params) {
      int64_t bytes = p.shape.numel() * 4;
      if (spec_.kind == "sgd") {
        if (spec_.momentum != 0) state_["sgd.momentum/" + p.path] = gpu_->alloc(bytes);
      } else {
        state_[spec_.kind + ".m/" + p.path] = gpu_->alloc(bytes);
        state_[spec_.kind + ".v/" + p.path] = gpu_->alloc(bytes);
      }
    }
  }

  void upload(const std::string& path, const std::vector<float>& values) override {
    ParamMemory& m = params_.at(path);
    SX_ASSERT(static_cast<int64_t>(values.size()) == m.elements, "a parameter uploaded with the wrong size");
    gpu_->upload(m.master, values.data(), m.elements * 4);
    if (m.copy) write_copy(m, values);
  }
  std::vector<float> download(const std::string& path) const override {
    const ParamMemory& m = params_.at(path);
    std::vector<float> v(static_cast<size_t>(m.elements));
    gpu_->download(v.data(), m.master, m.elements * 4);
    return v;
  }
  std::vector<std::string> optimizer_state_names() const override {
    std::vector<std::string> names;
    for (const auto& [name, p] : state_) names.push_back(name);
    return names;
  }
  void upload_optimizer_state(const std::string& name, const std::vector<float>& values) override {
    int64_t n = params_.at(name.substr(name.find('/') + 1)).elements;
    SX_ASSERT(static_cast<int64_t>(values.size()) == n, "optimizer state uploaded with the wrong size");
    gpu_->upload(state_.at(name), values.data(), n * 4);
  }
  std::vector<float> download_optimizer_state(const std::string& name) const override {
    std::vector<float> v(static_cast<size_t>(params_.at(name.substr(name.find('/') + 1)).elements));
    gpu_->download(v.data(), state_.at(name), static_cast<int64_t>(v.size()) * 4);
    return v;
  }

  backend::GraphHandle load(const Graph& g, const plan::Plan& p, std::map<std::string, NodeId> gradients) override {
    Precision precision = precision_;
    for (const Node& n : g.nodes())
      if (n.op == Op::RoundBf16) precision = Precision::bf16;
    OptimizerInfo info;
    if (!gradients.empty() && has_optimizer_) {
      info.present = true, info.clip = spec_.clip.has_value();
      info.tensors = static_cast<int64_t>(params_.size());
      for (const auto& [path, m] : params_) info.elements += m.elements;
    }
    Lowering lowering = lower(g, p, precision, info);
    Resident resident;
    resident.param = [this](const std::string& path) { return params_.at(path).master; };
    resident.param_copy = [this](const std::string& path) { return copy_of(path); };
    auto plan = std::make_shared<const plan::Plan>(p);
    graphs_.push_back(load_graph(*gpu_, g, *plan, lowering, resident));
    LoadedGraph& l = graphs_.back();
    l.owned_plan = plan;
    l.gradients = std::move(gradients);
    LoadedLowering report{&g, std::move(lowering), l.arena_bytes, std::nullopt};
    if (nvrtc_) report.compiled = load_code(l, info.present);
    if (nvrtc_ && info.present) load_device_kernels(l);
    lowerings_.push_back(std::move(report));
    return static_cast<backend::GraphHandle>(graphs_.size()) - 1;
  }

  void run(backend::GraphHandle h, const backend::DeviceInputs& inputs, uint64_t rng_offset) override {
    LoadedGraph& l = graphs_.at(static_cast<size_t>(h));
    for (const auto& [name, data] : inputs) {
      NodeId id = l.g->find_input(name);
      auto it = id == kNoNode ? l.where.end() : l.where.find(id);
      if (it != l.where.end()) gpu_->upload(it->second, data, l.g->node(id).shape.numel() * 4);
    }
    for (Call& c : l.calls)
      if (c.rng_word >= 0) l.words[static_cast<size_t>(c.rng_word)] = rng_offset;
    if (l.scalars) gpu_->upload(l.scalars, l.words.data(), static_cast<int64_t>(l.words.size()) * 8);
    as_graph(l.captured, [&] {
      for (Call& c : l.calls) {
        if (c.is_gemm)
          gpu_->gemm(c.gemm_call);
        else
          gpu_->launch(c.launch);
      }
    });
  }

  float scalar(backend::GraphHandle h, NodeId id) const override {
    ref::Tensor<float> t = read(h, id);
    return is_float(t.dtype) ? t.f.at(0) : static_cast<float>(t.i.at(0));
  }

  ref::Tensor<float> read(backend::GraphHandle h, NodeId id) const override {
    const LoadedGraph& l = graphs_.at(static_cast<size_t>(h));
    const Node& n = l.g->node(id);
    const auto [s, t] = stored(l, id);
    int64_t count = n.shape.numel();
    std::vector<uint8_t> bytes(static_cast<size_t>(count * kir::type_bytes(t)));
    gpu_->download(bytes.data(), l.where.at(s), static_cast<int64_t>(bytes.size()));
    ref::Tensor<float> out = ref::Tensor<float>::zeros(n.dtype, n.shape);
    for (int64_t i = 0; i < count; ++i) {
      Element e = element_at(t, &bytes[static_cast<size_t>(i * kir::type_bytes(t))], is_float(n.dtype));
      if (is_float(n.dtype))
        out.f[i] = e.f;
      else
        out.i[i] = e.i;
    }
    return out;
  }

  // Each value copied on the device into a slot of `kept_` (4 bytes each), downloaded once by kept_scalars.
  void keep_scalars(backend::GraphHandle h, const std::vector<NodeId>& ids) override {
    const LoadedGraph& l = graphs_.at(static_cast<size_t>(h));
    for (NodeId id : ids) {
      const auto [s, t] = stored(l, id);
      if (kept_.size() == kept_capacity_) grow_kept();
      gpu_->copy(kept_at_ + static_cast<DevicePtr>(kept_.size()) * 4, l.where.at(s), kir::type_bytes(t));
      kept_.push_back({t, is_float(l.g->node(id).dtype)});
    }
  }
  std::vector<float> kept_scalars() override {
    std::vector<float> out = std::exchange(kept_before_, {});
    read_kept(out);
    return out;
  }

  void accumulate_gradients(backend::GraphHandle train, int64_t j, int64_t m) override;
  std::optional<std::string> first_nonfinite_gradient() const override;
  StepStats update(int64_t k, double lr, bool want_stats) override;

  // Several GPUs (runtime/device_group.h): the step's gradient buffers in model-path order.
  size_t step_gradient_size() const override {
    size_t n = 0;
    for (const auto& [path, m] : params_) n += static_cast<size_t>(m.elements);
    return n;
  }
  void read_step_gradient(float* out) const override {
    for (const auto& [path, m] : params_) {
      gpu_->download(out, m.grad, m.elements * 4);
      out += m.elements;
    }
  }
  void write_step_gradient(const float* in) override {
    for (auto& [path, m] : params_) {
      gpu_->upload(m.grad, in, m.elements * 4);
      in += m.elements;
    }
  }

 private:
  // Every parameter's bf16 copy, made when a graph first reads one (the
  // memory plan counts them all); from then on the update writes them.
  DevicePtr copy_of(const std::string& path) {
    if (!params_.at(path).copy) {
      for (auto& [p, m] : params_) {
        m.copy = gpu_->alloc(m.elements * 2);
        write_copy(m, download(p));
      }
      optimizer_kernels_.clear();
      update_graph_ = {};  // captured with the kernels just dropped
    }
    return params_.at(path).copy;
  }
  void write_copy(ParamMemory& m, const std::vector<float>& values) {
    std::vector<uint16_t> bits(values.size());
    for (size_t i = 0; i < values.size(); ++i) bits[i] = kir::to_bf16_bits(values[i]);
    gpu_->upload(m.copy, bits.data(), m.elements * 2);
  }
  // Where `id`'s values are in `l`'s memory, and their element type there.
  static std::pair<NodeId, kir::Type> stored(const LoadedGraph& l, NodeId id) {
    const NodeId s = storage_of(*l.g, *l.p, id);
    return {s, l.g->node(s).op == Op::Param ? kir::Type::f32 : value_type(l.g->node(s))};
  }
  // `scalars`: where the kernel's scalar words are (uploaded by the caller), 0 when it has none.
  void launch(const DeviceKernel& k, std::vector<DevicePtr> buffers, DevicePtr scalars = 0) const {
    SX_ASSERT(k.k.scalars.empty() == (scalars == 0), "a device kernel launched without its scalars' words");
    if (nvrtc_ && k.handle < 0) give_code({const_cast<DeviceKernel*>(&k)});
    KernelCall c;
    c.kernel = &k.k, c.handle = k.handle, c.grid = k.k.grid, c.block = k.k.block;
    c.buffers = std::move(buffers), c.scalars = scalars;
    gpu_->launch(c);
  }
  // A sequence of calls the device makes again and again (a graph's, the
  // microbatch sum, the scan, the update): run as they are the first time
  // (kernels compile at their first launch), captured as one CUDA graph the
  // second, and replayed from then on. `calls` makes launches, products and
  // memsets only: what varies (inputs, scalar words) is uploaded before.
  void as_graph(Captured& c, const std::function<void()>& calls) const {
    if (c.exec < 0 && (c.runs++ == 0 || !g_capture_graphs)) return calls();
    if (c.exec < 0) {
      gpu_->begin_capture();
      calls();
      c.exec = gpu_->end_capture();
      ++graphs_tally_.captured;
    }
    gpu_->replay(c.exec);
    ++graphs_tally_.replays;
  }
  struct Kept {
    kir::Type type;
    bool float_out;  // else an integer output, as float
  };
  // The kept values as scalar() gives them, appended to `out`; the slots are free again.
  void read_kept(std::vector<float>& out) {
    std::vector<uint8_t> bytes(kept_.size() * 4);
    if (!kept_.empty()) gpu_->download(bytes.data(), kept_at_, static_cast<int64_t>(bytes.size()));
    for (size_t i = 0; i < kept_.size(); ++i) {
      Element e = element_at(kept_[i].type, &bytes[i * 4], kept_[i].float_out);
      out.push_back(kept_[i].float_out ? e.f : static_cast<float>(e.i));  // as scalar() gives it
    }
    kept_.clear();
  }
  // More slots: the values kept so far are read first (once, in a run's first step).
  void grow_kept() {
    read_kept(kept_before_);
    if (kept_at_) gpu_->free(kept_at_);
    kept_capacity_ = std::max<size_t>(64, 2 * kept_capacity_);
    kept_at_ = gpu_->alloc(static_cast<int64_t>(kept_capacity_) * 4);
  }
  const DeviceKernel& optimizer_kernel(kir::Optimizer::Stage stage);
  bool has_copies() const { return !params_.empty() && params_.begin()->second.copy != 0; }
  CompiledLaunches load_code(LoadedGraph& l, bool training);
  void load_device_kernels(const LoadedGraph& train);
  DeviceKernel& accumulate_kernel(const LoadedGraph& train, const std::string& path);
  DeviceKernel& scan_kernel(int64_t elements) const;
  // Compiles and loads `kernels` that have no code yet (all at once: one set of programs).
  void give_code(const std::vector<DeviceKernel*>& kernels) const;

  std::unique_ptr<Gpu> gpu_;
  Precision precision_;
  const Nvrtc* nvrtc_;  // null: kernels are interpreted (the emulated GPU), not compiled
  mutable KernelCounters tally_;
  std::vector<ParamInfo> param_infos_;
  std::map<std::string, ParamMemory> params_;
  std::map<std::string, DevicePtr> state_;
  OptimizerSpec spec_;
  bool has_optimizer_ = false;
  std::vector<LoadedGraph> graphs_;
  std::vector<LoadedLowering> lowerings_;
  static constexpr int64_t kStepWords = 16;  // the step kernels' scalar words (the update's)
  DevicePtr flags_ = 0, norms_ = 0, words_ = 0;
  mutable GraphCounters graphs_tally_;
  DevicePtr kept_at_ = 0;  // keep_scalars' slots
  size_t kept_capacity_ = 0;
  std::vector<Kept> kept_;
  std::vector<float> kept_before_;                                               // read when the slots grew
  std::map<std::pair<backend::GraphHandle, bool>, Captured> accumulate_graphs_;  // by graph, first microbatch
  mutable Captured scan_graph_;
  Captured update_graph_;
  DevicePtr scale_ = 0;                             // the microbatch gradients' weight, 1/m, read by the accumulation
  int64_t scale_for_ = 0;                           // the m it holds
  std::map<std::string, DeviceKernel> accumulate_;  // by parameter path
  mutable std::map<int64_t, DeviceKernel> scan_;    // by elements
  std::map<int, DeviceKernel> optimizer_kernels_;   // by stage
};

#include "backend/cuda/cuda_device_code.inc"
#include "backend/cuda/cuda_device_step.inc"

}  // namespace

namespace {
RealGpuFactory g_real_gpu = nullptr;
}

void capture_cuda_graphs(bool on) { g_capture_graphs = on; }

Gpu* gpu_of(backend::Device& device) {
  auto* cuda = dynamic_cast<CudaDevice*>(&device);
  return cuda ? &cuda->gpu_for_collectives() : nullptr;
}

void install_real_gpu(RealGpuFactory make) { g_real_gpu = make; }

std::unique_ptr<Gpu> make_gpu(bool emulate, int64_t memory_bytes, const std::vector<int>& ordinals) {
  if (emulate) return make_emulated_gpu(memory_bytes);
  return g_real_gpu ? g_real_gpu(ordinals) : nullptr;
}

namespace {
bool g_compile_emulated = false;
}

void compile_on_emulated_gpu(bool on) { g_compile_emulated = on; }

std::unique_ptr<backend::Device> make_cuda_device_on(std::unique_ptr<Gpu> gpu, Precision precision) {
  // A real GPU runs compiled kernels only (no NVRTC is E-DEV-030); the
  // emulated one interprets them, and compiles them too when asked and NVRTC is here.
  const Nvrtc* nvrtc = gpu->interprets() ? (g_compile_emulated ? cuda::nvrtc().library : nullptr) : &require_nvrtc();
  return std::make_unique<CudaDevice>(std::move(gpu), precision, nvrtc);
}

}  // namespace sx::cuda

namespace sx::backend {

std::unique_ptr<Device> make_cuda_device(std::string_view, const DeviceOptions& options) {
  // The command line has read the environment already; a device made in a test reads it here too.
  Environment env = parse_environment();
  constexpr int64_t kEmulatedMemory = 80ll << 30;
  int64_t memory = env.memory_gib ? static_cast<int64_t>(*env.memory_gib * double(1ll << 30)) : kEmulatedMemory;
  // Several GPUs make one device per ordinal (runtime/device_group.h); one GPU is SEXPGPU_DEVICES' first.
  std::vector<int> ordinals = options.ordinal >= 0 ? std::vector<int>{options.ordinal} : env.devices;
  std::unique_ptr<cuda::Gpu> gpu = cuda::make_gpu(env.cuda_emulate > 0, memory, ordinals);
  if (!gpu)
    throw UserError(Code::DEV_001, {}, "this sexpgpu cannot drive a GPU yet (no CUDA driver layer)",
                    "set SEXPGPU_CUDA_EMULATE=1 to run on the emulated CUDA device, or run with --device cpu");
  cuda::Precision precision = cuda::Precision::f32;
  cuda::parse_precision(options.precision, &precision);
  return cuda::make_cuda_device_on(std::move(gpu), precision);
}

}  // namespace sx::backend
