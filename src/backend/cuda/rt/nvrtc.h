#pragma once
// NVRTC, loaded at run time with dlopen: the binary starts on a machine
// without CUDA, and "NVRTC is not here" is a value (explain then lists the
// kernels as `not compiled`), not a failed start or a crash.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sx::cuda {

// What ptxas reports for one kernel (`--ptxas-options=-v`).
struct KernelResources {
  std::string name;  // the entry's symbol as ptxas names it (extern "C" kernels: the plain name)
  int registers = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int stack_bytes = 0;
  int shared_bytes = 0;  // static shared memory (smem)
};

// Reads every "Compiling entry function" section of a ptxas -v log.
std::vector<KernelResources> parse_ptxas_report(std::string_view log);

struct CompiledProgram {
  std::vector<uint8_t> cubin;
  std::string log;  // NVRTC's log, ptxas's report included
  std::vector<KernelResources> kernels;
};

struct CompileOutcome {
  bool ok = false;
  CompiledProgram program;  // on failure: only `log`, which says why
};

class Nvrtc;

// Where NVRTC was looked for and what was found. `library` is null when
// none loads; `failure` then says, per place tried, why not.
struct NvrtcStatus {
  const Nvrtc* library = nullptr;
  std::string path;     // the file that loaded
  std::string failure;  // when none did
};

// The places tried, in order: the bare soname (LD_LIBRARY_PATH, the loader's
// cache), /usr/local/cuda/lib64 then /usr/local/cuda-*/lib64 (newest first),
// then the NVIDIA wheels of a Python venv ($VIRTUAL_ENV, /opt/torch/.venv):
// site-packages/nvidia/cuda_nvrtc/lib and site-packages/nvidia/cu13/lib.
std::vector<std::string> default_nvrtc_candidates();

// The first candidate that loads and has every entry point used. The
// process-wide one (default candidates) is loaded once and kept.
NvrtcStatus load_nvrtc(const std::vector<std::string>& candidates);
const NvrtcStatus& nvrtc();
// nvrtc().library, or E-DEV-030 with the places tried.
const Nvrtc& require_nvrtc();

class Nvrtc {
 public:
  // "13.0"
  std::string version() const;
  int major() const { return major_; }
  int minor() const { return minor_; }
  // One program (a source holding several kernels) to a cubin for `arch`
  // ("sm_90", "sm_80"); `options` are added after -arch and
  // --ptxas-options=-v. Thread-safe (NVRTC programs are independent).
  CompileOutcome compile(std::string_view source, std::string_view program_name, std::string_view arch,
                         const std::vector<std::string>& options = {}) const;

  struct Api;  // the entry points, bound by load_nvrtc
  Nvrtc(const Api* api, int major, int minor) : api_(api), major_(major), minor_(minor) {}

 private:
  const Api* api_;
  int major_, minor_;
};

// compile() or E-DEV-031 with the program's name, the architecture and the log.
CompiledProgram compile_or_throw(const Nvrtc& nvrtc, std::string_view source, std::string_view program_name,
                                 std::string_view arch, const std::vector<std::string>& options = {});

}  // namespace sx::cuda
