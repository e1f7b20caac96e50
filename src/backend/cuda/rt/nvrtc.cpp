#include "backend/cuda/rt/nvrtc.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <regex>

#include "util/error.h"
#include "util/toolkit_libraries.h"

namespace sx::cuda {

// NVRTC's C API as nvrtc.h declares it; no CUDA header is needed to build.
using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;
constexpr nvrtcResult kNvrtcSuccess = 0;

struct Nvrtc::Api {
  const char* (*get_error_string)(nvrtcResult);
  nvrtcResult (*version)(int*, int*);
  nvrtcResult (*create_program)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
  nvrtcResult (*destroy_program)(nvrtcProgram*);
  nvrtcResult (*compile_program)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*get_program_log_size)(nvrtcProgram, size_t*);
  nvrtcResult (*get_program_log)(nvrtcProgram, char*);
  nvrtcResult (*get_cubin_size)(nvrtcProgram, size_t*);
  nvrtcResult (*get_cubin)(nvrtcProgram, char*);
};

namespace {

constexpr const char* kSoname = "libnvrtc.so.13";

template <typename F>
void bind(void* lib, F& f, const char* name, std::string& missing) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (f == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
}

std::string check(const Nvrtc::Api& api, nvrtcResult r, const char* what) {
  if (r == kNvrtcSuccess) return {};
  const char* s = api.get_error_string(r);
  return fmt::format("{}: {}", what, s ? s : fmt::format("NVRTC error {}", r));
}

}  // namespace

std::vector<std::string> default_nvrtc_candidates() {
  return toolkit_library_candidates(kSoname, {"lib64/"}, {"nvidia/cuda_nvrtc/lib/", "nvidia/cu13/lib/"});
}

NvrtcStatus load_nvrtc(const std::vector<std::string>& candidates) {
  NvrtcStatus status;
  for (const auto& path : candidates) {
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* why = dlerror();
      status.failure += fmt::format("{}{}: {}", status.failure.empty() ? "" : "; ", path, why ? why : "not found");
      continue;
    }
    auto api = std::make_unique<Nvrtc::Api>();
    std::string missing;
    bind(lib, api->get_error_string, "nvrtcGetErrorString", missing);
    bind(lib, api->version, "nvrtcVersion", missing);
    bind(lib, api->create_program, "nvrtcCreateProgram", missing);
    bind(lib, api->destroy_program, "nvrtcDestroyProgram", missing);
    bind(lib, api->compile_program, "nvrtcCompileProgram", missing);
    bind(lib, api->get_program_log_size, "nvrtcGetProgramLogSize", missing);
    bind(lib, api->get_program_log, "nvrtcGetProgramLog", missing);
    bind(lib, api->get_cubin_size, "nvrtcGetCUBINSize", missing);
    bind(lib, api->get_cubin, "nvrtcGetCUBIN", missing);
    int major = 0, minor = 0;
    if (missing.empty() && api->version(&major, &minor) != kNvrtcSuccess) missing = "a working nvrtcVersion";
    if (!missing.empty()) {
      status.failure += fmt::format("{}{}: it lacks {}", status.failure.empty() ? "" : "; ", path, missing);
      dlclose(lib);
      continue;
    }
    // Loaded libraries stay loaded for the process: kernels compiled by it
    // may be in use until exit.
    status.library = new Nvrtc(api.release(), major, minor);
    status.path = path;
    status.failure.clear();
    return status;
  }
  if (status.failure.empty()) status.failure = "no place to look";
  return status;
}

const NvrtcStatus& nvrtc() {
  static const NvrtcStatus status = load_nvrtc(default_nvrtc_candidates());
  return status;
}

const Nvrtc& require_nvrtc() {
  const auto& s = nvrtc();
  if (s.library == nullptr)
    throw UserError(Code::DEV_030, {}, fmt::format("cannot load NVRTC ({}): {}", kSoname, s.failure),
                    "install the CUDA toolkit 13 (/usr/local/cuda) or NVIDIA's nvrtc wheel, or put the folder "
                    "holding libnvrtc.so.13 on LD_LIBRARY_PATH");
  return *s.library;
}

std::string Nvrtc::version() const { return fmt::format("{}.{}", major_, minor_); }

CompileOutcome Nvrtc::compile(std::string_view source, std::string_view program_name, std::string_view arch,
                              const std::vector<std::string>& options) const {
  CompileOutcome out;
  std::string src(source), name(program_name);
  nvrtcProgram prog = nullptr;
  if (auto e = check(*api_, api_->create_program(&prog, src.c_str(), name.c_str(), 0, nullptr, nullptr),
                     "nvrtcCreateProgram");
      !e.empty()) {
    out.program.log = e;
    return out;
  }
  std::vector<std::string> opts{fmt::format("-arch={}", arch), "--ptxas-options=-v"};
  opts.insert(opts.end(), options.begin(), options.end());
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  nvrtcResult compiled = api_->compile_program(prog, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  if (api_->get_program_log_size(prog, &log_size) == kNvrtcSuccess && log_size > 1) {
    out.program.log.resize(log_size);
    if (api_->get_program_log(prog, out.program.log.data()) != kNvrtcSuccess) out.program.log.clear();
    while (!out.program.log.empty() && out.program.log.back() == '\0') out.program.log.pop_back();
  }
  std::string failure = check(*api_, compiled, "nvrtcCompileProgram");
  if (failure.empty()) {
    size_t size = 0;
    failure = check(*api_, api_->get_cubin_size(prog, &size), "nvrtcGetCUBINSize");
    if (failure.empty()) {
      out.program.cubin.resize(size);
      failure = check(*api_, api_->get_cubin(prog, reinterpret_cast<char*>(out.program.cubin.data())), "nvrtcGetCUBIN");
    }
  }
  api_->destroy_program(&prog);
  if (!failure.empty()) {
    out.program.cubin.clear();
    out.program.log = failure + (out.program.log.empty() ? "" : "\n" + out.program.log);
    return out;
  }
  out.program.kernels = parse_ptxas_report(out.program.log);
  out.ok = true;
  return out;
}

CompiledProgram compile_or_throw(const Nvrtc& nvrtc, std::string_view source, std::string_view program_name,
                                 std::string_view arch, const std::vector<std::string>& options) {
  auto outcome = nvrtc.compile(source, program_name, arch, options);
  if (!outcome.ok)
    throw UserError(Code::DEV_031, {},
                    fmt::format("NVRTC {} could not compile the kernels of {} for {}:\n{}", nvrtc.version(),
                                program_name, arch, outcome.program.log),
                    "generated kernels should always compile: please report this with the log above");
  return std::move(outcome.program);
}

std::vector<KernelResources> parse_ptxas_report(std::string_view log) {
  // ptxas info    : Compiling entry function 'name' for 'sm_90'
  // ptxas info    : Function properties for name
  //     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  // ptxas info    : Used 8 registers, used 0 barriers, 380 bytes cmem[0], 128 bytes smem
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  std::vector<KernelResources> out;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t end = log.find('\n', pos);
    if (end == std::string_view::npos) end = log.size();
    std::string line(log.substr(pos, end - pos));
    pos = end + 1;
    std::smatch m;
    if (std::regex_search(line, m, entry)) {
      out.push_back(KernelResources{m[1].str()});
      continue;
    }
    if (out.empty()) continue;
    auto& k = out.back();
    if (std::regex_search(line, m, frame)) {
      k.stack_bytes = std::stoi(m[1].str());
      k.spill_store_bytes = std::stoi(m[2].str());
      k.spill_load_bytes = std::stoi(m[3].str());
    }
    if (std::regex_search(line, m, used)) k.registers = std::stoi(m[1].str());
    if (std::regex_search(line, m, smem)) k.shared_bytes = std::stoi(m[1].str());
  }
  return out;
}

}  // namespace sx::cuda
