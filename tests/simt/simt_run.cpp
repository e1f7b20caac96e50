#include "simt_run.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <mutex>

namespace simt {
namespace {

// The shim's entry point, as simt.h defines it (dim3 and Dim3 share a layout).
using RunGrid = int (*)(Dim3, Dim3, int, unsigned long, void (*)(void*), void*, char*, unsigned long);
constexpr unsigned long kFiberStack = 256 * 1024;

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::shared_ptr<CudaOnCpu> CudaOnCpu::compile(const std::string& cu_path) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<CudaOnCpu>> compiled;
  std::lock_guard lock(mutex);
  if (auto it = compiled.find(cu_path); it != compiled.end()) return it->second;
  if (!std::filesystem::is_regular_file(cu_path)) throw std::runtime_error("no CUDA source file " + cu_path);
  char dir_template[] = "/tmp/sx-simt-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) throw std::runtime_error("mkdtemp failed");
  std::string so = std::string(dir_template) + "/kernels.so";
  // -fvisibility=hidden: only the kernels and simt_run_grid are exported, so
  // two loaded sources never share the shim's state.
  std::string command = std::string(SIMT_CXX) + " -std=c++20 -O1 -fPIC -shared -fvisibility=hidden -w -I" +
                        shell_quote(SIMT_INCLUDE_DIR) + " -include simt.h -x c++ " + shell_quote(cu_path) + " -o " +
                        shell_quote(so) + " 2>&1";
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
  int status = pclose(pipe);
  void* library = nullptr;
  if (status == 0) library = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string why = status != 0 ? output : (library == nullptr ? dlerror() : "");
  std::filesystem::remove_all(dir_template);
  if (library == nullptr) throw std::runtime_error("compiling " + cu_path + " as host C++ failed:\n" + why);
  auto loaded = std::shared_ptr<CudaOnCpu>(new CudaOnCpu(library));
  compiled[cu_path] = loaded;
  return loaded;
}

CudaOnCpu::~CudaOnCpu() { dlclose(library_); }

void* CudaOnCpu::symbol(const std::string& name) const {
  void* s = dlsym(library_, name.c_str());
  if (s == nullptr) throw std::runtime_error("no kernel " + name + " (is it extern \"C\" __global__?)");
  return s;
}

void CudaOnCpu::run(Dim3 grid, Dim3 block, Order order, void (*thunk)(void*), void* context) {
  auto run_grid = reinterpret_cast<RunGrid>(symbol("simt_run_grid"));
  char error[4096] = {};
  if (run_grid(grid, block, order == Order::reverse, kFiberStack, thunk, context, error, sizeof error) != 0)
    throw LaunchError(error);
}

}  // namespace simt
