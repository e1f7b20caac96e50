#include "backend/cuda/driver/real_gpu.h"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <unordered_map>

#include "backend/cuda/driver/lt_gemm.h"
#include "backend/cuda/rt/nvrtc.h"
#include "util/error.h"
#include "util/memory.h"

namespace sx::cuda {

constexpr const char* kOutOfMemoryHelp =
    "raise :microbatches, use :precision bf16, or free the GPU (nvidia-smi shows who holds it)";

UserError driver_call_error(const DriverApi* api, const char* call, api::CUresult r) {
  if (r == api::CUDA_ERROR_OUT_OF_MEMORY)
    return UserError(Code::DEV_007, {}, fmt::format("the CUDA call {} failed: {}", call, driver_error_text(api, r)),
                     kOutOfMemoryHelp);
  return UserError(Code::DEV_007, {}, fmt::format("the CUDA call {} failed: {}", call, driver_error_text(api, r)));
}

UserError cublas_call_error(const CublasLtApi* api, const char* call, api::cublasStatus_t s) {
  return UserError(Code::DEV_007, {}, fmt::format("the cuBLASLt call {} failed: {}", call, cublas_status_text(api, s)));
}

namespace {

class RealGpu final : public Gpu {
 public:
  RealGpu(const DriverApi& d, const CublasLtApi* lt, const CudaDeviceInfo& info) : d_(d), lt_(lt), info_(info) {
    check(d_.init(0), "cuInit");
    check(d_.device_get(&dev_, info.ordinal), "cuDeviceGet");
    check(d_.primary_ctx_retain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
    check(d_.ctx_set_current(ctx_), "cuCtxSetCurrent");
    check(d_.stream_create(&stream_, api::CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    void* host = nullptr;
    check(d_.mem_host_alloc(&host, kStagingBytes, api::kMemHostAllocPortable), "cuMemHostAlloc");
    staging_ = static_cast<uint8_t*>(host);
  }

  ~RealGpu() override {
    // Errors are not thrown from here: the run is over, or already failing.
    d_.stream_synchronize(stream_);
    for (auto& [key, plan] : plans_) destroy(plan);
    if (lt_handle_) lt_->destroy(lt_handle_);
    for (auto e : graphs_) d_.graph_exec_destroy(e);
    for (auto m : modules_) d_.module_unload(m);
    for (auto& [p, bytes] : sizes_) d_.mem_free(p);
    if (staging_) d_.mem_free_host(staging_);
    if (readback_) d_.mem_free_host(readback_);
    d_.stream_destroy(stream_);
    d_.primary_ctx_release(dev_);
  }

  std::string name() const override { return info_.name; }
  int64_t total_memory() const override { return static_cast<int64_t>(info_.total_bytes); }
  int64_t free_memory() const override {
    size_t free = 0, total = 0;
    check(d_.mem_get_info(&free, &total), "cuMemGetInfo");
    return static_cast<int64_t>(free);
  }
  std::string arch() const override { return info_.arch(); }

  DevicePtr alloc(int64_t bytes) override {
    api::CUdeviceptr p = 0;
    api::CUresult r = d_.mem_alloc(&p, static_cast<size_t>(std::max<int64_t>(bytes, 1)));
    if (r == api::CUDA_ERROR_OUT_OF_MEMORY)
      throw UserError(Code::DEV_007, {},
                      fmt::format("cuMemAlloc of {} on {}: out of memory ({} allocated by this run, {} free)",
                                  bytes_text(bytes), info_.name, bytes_text(allocated_), bytes_text(free_memory())),
                      kOutOfMemoryHelp);
    check(r, "cuMemAlloc");
    sizes_[p] = bytes;
    allocated_ += bytes;
    peak_ = std::max(peak_, allocated_);
    return p;
  }

  void free(DevicePtr p) override {
    auto it = sizes_.find(p);
    SX_ASSERT(it != sizes_.end(), "free of an address alloc did not give");
    check(d_.mem_free(p), "cuMemFree");
    allocated_ -= it->second;
    sizes_.erase(it);
  }

  // Through the pinned ring: staged bytes are only reused after a
  // synchronize (a download's, or the ring's own when it is full), when the
  // copies that read them have finished.
  void upload(DevicePtr dst, const void* src, int64_t bytes) override {
    SX_ASSERT(!capturing_, "an upload inside a graph capture would replay the staging's later contents");
    const auto* from = static_cast<const uint8_t*>(src);
    while (bytes > 0) {
      int64_t n = std::min(bytes, kStagingBytes - staged_);
      if (n == 0) {
        synchronize();
        continue;
      }
      std::memcpy(staging_ + staged_, from, static_cast<size_t>(n));
      check(d_.memcpy_htod_async(dst, staging_ + staged_, static_cast<size_t>(n), stream_), "cuMemcpyHtoDAsync");
      staged_ += n, from += n, dst += static_cast<DevicePtr>(n), bytes -= n;
    }
  }

  void download(void* dst, DevicePtr src, int64_t bytes) override {
    check(d_.memcpy_dtoh_async(dst, src, static_cast<size_t>(bytes), stream_), "cuMemcpyDtoHAsync");
    synchronize();
  }

  void memset(DevicePtr dst, uint8_t value, int64_t bytes) override {
    check(d_.memset_d8_async(dst, value, static_cast<size_t>(bytes), stream_), "cuMemsetD8Async");
  }

  void copy(DevicePtr dst, DevicePtr src, int64_t bytes) override {
    check(d_.memcpy_dtod_async(dst, src, static_cast<size_t>(bytes), stream_), "cuMemcpyDtoDAsync");
  }

  ProgramHandle load_program(const Program& program) override {
    std::vector<uint8_t> cubin = program.cubin;
    if (cubin.empty()) cubin = compile_or_throw(require_nvrtc(), program.source, "kernels", arch()).cubin;
    api::CUmodule m = nullptr;
    check(d_.module_load_data(&m, cubin.data()), "cuModuleLoadData");
    modules_.push_back(m);
    return static_cast<ProgramHandle>(modules_.size() - 1);
  }

  KernelHandle kernel(ProgramHandle program, const std::string& name) override {
    SX_ASSERT(program >= 0 && program < static_cast<int>(modules_.size()), "a program load_program gave");
    api::CUfunction f = nullptr;
    check(d_.module_get_function(&f, modules_[program], name.c_str()), "cuModuleGetFunction");
    functions_.push_back(f);
    return static_cast<KernelHandle>(functions_.size() - 1);
  }

  void launch(const KernelCall& call) override {
    SX_ASSERT(call.handle >= 0 && call.handle < static_cast<int>(functions_.size()), "a kernel kernel() gave");
    // cuLaunchKernel reads each argument through a pointer to its value.
    std::vector<uint64_t> values(call.buffers.begin(), call.buffers.end());
    if (call.scalars) values.push_back(call.scalars);
    std::vector<void*> args;
    for (auto& v : values) args.push_back(&v);
    check(d_.launch_kernel(functions_[call.handle], static_cast<unsigned>(call.grid), 1, 1,
                           static_cast<unsigned>(call.block), 1, 1, static_cast<unsigned>(call.shared_bytes), stream_,
                           args.data(), nullptr),
          "cuLaunchKernel");
  }

  void gemm(const GemmCall& call) override {
    Plan& plan = plan_for(call.desc, call);
    set(plan.desc, api::CUBLASLT_MATMUL_DESC_BIAS_POINTER, call.bias ? call.bias : call.bias_grad,
        plan.lt.needs_bias || plan.lt.needs_bias_grad);
    set(plan.desc, api::CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, call.aux, plan.lt.needs_aux);
    DevicePtr workspace = call.workspace ? call.workspace : own_workspace();
    int64_t workspace_bytes = call.workspace ? call.workspace_bytes : kCublasLtWorkspaceBytes;
    const float alpha = call.desc.alpha, beta = call.desc.beta;
    auto ptr = [](DevicePtr p) { return reinterpret_cast<void*>(p); };
    check_lt(
        lt_->matmul(handle(), plan.desc, &alpha, ptr(call.a), plan.a, ptr(call.b), plan.b, &beta, ptr(call.d), plan.d,
                    ptr(call.d), plan.d, &plan.algo, ptr(workspace), static_cast<size_t>(workspace_bytes), stream_),
        "cublasLtMatmul");
  }

  void synchronize() override {
    check(d_.stream_synchronize(stream_), "cuStreamSynchronize");
    staged_ = 0;  // every copy out of the ring has happened
    finish_readbacks();
  }

  void begin_capture() override {
    check(d_.stream_begin_capture(stream_, api::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
    capturing_ = true;
  }

  GraphExecHandle end_capture() override {
    capturing_ = false;
    api::CUgraph graph = nullptr;
    check(d_.stream_end_capture(stream_, &graph), "cuStreamEndCapture");
    api::CUgraphExec exec = nullptr;
    api::CUresult r = d_.graph_instantiate(&exec, graph, 0);
    d_.graph_destroy(graph);
    check(r, "cuGraphInstantiate");
    graphs_.push_back(exec);
    return static_cast<GraphExecHandle>(graphs_.size() - 1);
  }

  void replay(GraphExecHandle graph) override {
    SX_ASSERT(graph >= 0 && graph < static_cast<int>(graphs_.size()), "a graph end_capture gave");
    check(d_.graph_launch(graphs_[graph], stream_), "cuGraphLaunch");
  }

  void* stream_handle() override { return stream_; }
  // Into pinned memory of its own (the copy is the stream's), moved to `dst` by idle().
  void download_async(void* dst, DevicePtr src, int64_t bytes) override {
    SX_ASSERT(!capturing_, "a download inside a graph capture");
    if (readback_used_ + bytes > readback_bytes_) {  // a larger buffer, once the copies into this one are done
      synchronize();
      finish_readbacks();
      if (readback_) d_.mem_free_host(readback_);
      void* host = nullptr;
      readback_bytes_ = std::max<int64_t>(2 * readback_bytes_, bytes);
      check(d_.mem_host_alloc(&host, static_cast<size_t>(readback_bytes_), api::kMemHostAllocPortable),
            "cuMemHostAlloc");
      readback_ = static_cast<uint8_t*>(host);
    }
    check(d_.memcpy_dtoh_async(readback_ + readback_used_, src, static_cast<size_t>(bytes), stream_),
          "cuMemcpyDtoHAsync");
    readbacks_.push_back({dst, readback_used_, bytes});
    readback_used_ += bytes;
  }
  bool idle() override {
    api::CUresult r = d_.stream_query(stream_);
    if (r == api::CUDA_ERROR_NOT_READY) return false;
    check(r, "cuStreamQuery");
    finish_readbacks();
    return true;
  }
  void make_current() override { check(d_.ctx_set_current(ctx_), "cuCtxSetCurrent"); }

  int64_t peak_allocated() const override { return peak_; }

 private:
  struct Readback {
    void* dst;
    int64_t at, bytes;
  };
  void finish_readbacks() {
    for (const Readback& r : readbacks_) std::memcpy(r.dst, readback_ + r.at, static_cast<size_t>(r.bytes));
    readbacks_.clear();
    readback_used_ = 0;
  }

  struct Plan {
    LtGemm lt;
    api::cublasLtMatmulDesc_t desc = nullptr;
    api::cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    api::cublasLtMatmulAlgo_t algo{};
  };

  void check(api::CUresult r, const char* call) const {
    if (r != api::CUDA_SUCCESS) throw driver_call_error(&d_, call, r);
  }
  void check_lt(api::cublasStatus_t s, const char* call) const {
    if (s != api::CUBLAS_STATUS_SUCCESS) throw cublas_call_error(lt_, call, s);
  }

  api::cublasLtHandle_t handle() {
    if (lt_ == nullptr)
      throw UserError(Code::DEV_005, {}, "cuBLASLt (libcublasLt.so.13) did not load: no matrix product can run",
                      "install the CUDA toolkit 13 or NVIDIA's cublas wheel");
    if (!lt_handle_) check_lt(lt_->create(&lt_handle_), "cublasLtCreate");
    return lt_handle_;
  }

  DevicePtr own_workspace() {
    if (!workspace_) workspace_ = alloc(kCublasLtWorkspaceBytes);  // counted in the peak, as the plan counts it
    return workspace_;
  }

  template <typename T>
  void set_layout(api::cublasLtMatrixLayout_t l, int attr, T v) {
    check_lt(lt_->matrix_layout_set_attribute(l, attr, &v, sizeof v), "cublasLtMatrixLayoutSetAttribute");
  }
  template <typename T>
  void set_desc(api::cublasLtMatmulDesc_t desc, int attr, T v) {
    check_lt(lt_->matmul_desc_set_attribute(desc, attr, &v, sizeof v), "cublasLtMatmulDescSetAttribute");
  }
  void set(api::cublasLtMatmulDesc_t desc, int attr, DevicePtr p, bool wanted) {
    if (!wanted) return;
    SX_ASSERT(p != 0, "an epilogue's pointer is bound");
    set_desc(desc, attr, reinterpret_cast<void*>(p));
  }

  api::cublasLtMatrixLayout_t layout(const LtMatrix& m) {
    api::cublasLtMatrixLayout_t l = nullptr;
    check_lt(lt_->matrix_layout_create(&l, m.type, m.rows, m.cols, m.ld), "cublasLtMatrixLayoutCreate");
    if (m.batch > 1) {
      set_layout(l, api::CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, m.batch);
      set_layout(l, api::CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, m.stride);
    }
    return l;
  }

  // The descriptors and the algorithm of a descriptor, made once.
  Plan& plan_for(const kir::Gemm& g, const GemmCall& call) {
    std::string key = lt_gemm_key(g);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    api::cublasLtHandle_t h = handle();
    Plan plan;
    plan.lt = lt_gemm(g);
    const LtGemm& lt = plan.lt;
    check_lt(lt_->matmul_desc_create(&plan.desc, lt.compute, lt.scale_type), "cublasLtMatmulDescCreate");
    set_desc(plan.desc, api::CUBLASLT_MATMUL_DESC_TRANSA, lt.trans_a);
    set_desc(plan.desc, api::CUBLASLT_MATMUL_DESC_TRANSB, lt.trans_b);
    set_desc(plan.desc, api::CUBLASLT_MATMUL_DESC_EPILOGUE, lt.epilogue);
    if (lt.needs_bias || lt.needs_bias_grad)
      set_desc(plan.desc, api::CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, lt.bias_type);
    if (lt.needs_aux) {
      set_desc(plan.desc, api::CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, lt.aux_ld);
      set_desc(plan.desc, api::CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, lt.aux_type);
      if (lt.d.batch > 1) set_desc(plan.desc, api::CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, lt.aux_stride);
    }
    // The heuristic sees the epilogue pointers' alignment: set them first.
    set(plan.desc, api::CUBLASLT_MATMUL_DESC_BIAS_POINTER, call.bias ? call.bias : call.bias_grad,
        lt.needs_bias || lt.needs_bias_grad);
    set(plan.desc, api::CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, call.aux, lt.needs_aux);
    plan.a = layout(lt.a), plan.b = layout(lt.b), plan.d = layout(lt.d);
    api::cublasLtMatmulPreference_t pref = nullptr;
    check_lt(lt_->preference_create(&pref), "cublasLtMatmulPreferenceCreate");
    uint64_t workspace = static_cast<uint64_t>(call.workspace ? call.workspace_bytes : kCublasLtWorkspaceBytes);
    lt_->preference_set_attribute(pref, api::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace);
    api::cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    api::cublasStatus_t s =
        lt_->algo_get_heuristic(h, plan.desc, plan.a, plan.b, plan.d, plan.d, pref, 1, &result, &found);
    lt_->preference_destroy(pref);
    if (s == api::CUBLAS_STATUS_SUCCESS && found == 0) s = api::CUBLAS_STATUS_NOT_SUPPORTED;
    if (s != api::CUBLAS_STATUS_SUCCESS) {
      destroy(plan);
      throw UserError(Code::DEV_007, {},
                      fmt::format("cuBLASLt has no algorithm for the product {}: {}", key, cublas_status_text(lt_, s)));
    }
    plan.algo = result.algo;
    return plans_.emplace(std::move(key), plan).first->second;
  }

  void destroy(Plan& p) {
    if (p.a) lt_->matrix_layout_destroy(p.a);
    if (p.b) lt_->matrix_layout_destroy(p.b);
    if (p.d) lt_->matrix_layout_destroy(p.d);
    if (p.desc) lt_->matmul_desc_destroy(p.desc);
    p = Plan{};
  }

  const DriverApi& d_;
  const CublasLtApi* lt_;
  CudaDeviceInfo info_;
  api::CUdevice dev_ = 0;
  api::CUcontext ctx_ = nullptr;
  api::CUstream stream_ = nullptr;
  api::cublasLtHandle_t lt_handle_ = nullptr;
  api::CUdeviceptr workspace_ = 0;
  uint8_t* staging_ = nullptr;
  int64_t staged_ = 0;
  uint8_t* readback_ = nullptr;  // download_async's pinned memory
  int64_t readback_bytes_ = 0, readback_used_ = 0;
  std::vector<Readback> readbacks_;
  bool capturing_ = false;
  std::unordered_map<DevicePtr, int64_t> sizes_;
  int64_t allocated_ = 0, peak_ = 0;
  std::vector<api::CUmodule> modules_;
  std::vector<api::CUfunction> functions_;
  std::vector<api::CUgraphExec> graphs_;
  std::map<std::string, Plan> plans_;
};

}  // namespace

std::unique_ptr<Gpu> make_real_gpu(const DriverApi& driver, const CublasLtApi* lt, const CudaDeviceInfo& device) {
  return std::make_unique<RealGpu>(driver, lt, device);
}

std::unique_ptr<Gpu> make_real_gpu(const std::vector<int>& ordinals) {
  auto devices = require_cuda_devices(discovered(), ordinals);
  return make_real_gpu(*driver().api, cublaslt().api.get(), devices.front());
}

}  // namespace sx::cuda
