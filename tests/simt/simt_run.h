#pragma once
// Runs CUDA C++ source text on the CPU (test-only): the file is compiled as
// host C++ with simt.h force-included into a shared object, loaded, and its
// kernels (extern "C" __global__) launched by name.
//
//   auto cu = simt::CudaOnCpu::compile("kernels/softmax.cu");
//   cu->launch("softmax_rows", {rows}, {32}, simt::Order::reverse, out, in, cols);
//
// The arguments must have the kernel's parameter types exactly (pass an
// `int`, not a size_t, for an `int n`): the kernel is called through a
// pointer of the types given.
#include <dlfcn.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>

namespace simt {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};
// forward: each phase between barriers runs threads 0, 1, ...; reverse: the
// last thread first. Run both: a missing barrier shows in one of them.
enum class Order { forward, reverse };

// A launch stopped by the shim: a divergent barrier, a deadlock, a partial
// warp mask.
struct LaunchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class CudaOnCpu {
 public:
  // Compiles `cu_path` (throws std::runtime_error with the compiler's
  // output). Compiled once per path per process.
  static std::shared_ptr<CudaOnCpu> compile(const std::string& cu_path);

  template <typename... Args>
  void launch(const std::string& kernel, Dim3 grid, Dim3 block, Order order, Args... args) {
    using Kernel = void (*)(Args...);
    auto k = reinterpret_cast<Kernel>(symbol(kernel));
    auto call = [&] { k(args...); };
    run(
        grid, block, order, [](void* c) { (*static_cast<decltype(call)*>(c))(); }, &call);
  }

  ~CudaOnCpu();
  CudaOnCpu(const CudaOnCpu&) = delete;
  CudaOnCpu& operator=(const CudaOnCpu&) = delete;

 private:
  explicit CudaOnCpu(void* library) : library_(library) {}
  void* symbol(const std::string& name) const;
  void run(Dim3 grid, Dim3 block, Order order, void (*thunk)(void*), void* context);
  void* library_;
};

// The function form: compile `cu_path` (once) and launch one kernel.
template <typename... Args>
void run_cuda_source_on_cpu(const std::string& cu_path, const std::string& kernel, Dim3 grid, Dim3 block, Order order,
                            Args... args) {
  CudaOnCpu::compile(cu_path)->launch(kernel, grid, block, order, args...);
}

}  // namespace simt
