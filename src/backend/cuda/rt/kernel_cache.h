#pragma once
// Compiled kernel programs on disk, shared by every sexpgpu process of a user:
// $XDG_CACHE_HOME/sexpgpu/kernels (default ~/.cache/sexpgpu/kernels), one file
// per program, named by a hash of everything that decides its cubin (source,
// architecture, NVRTC version, options). An entry is written to a temporary
// file and renamed into place, so a reader sees a whole entry or none; each
// entry stores its payload's length and SHA-256, so one that is cut short or
// damaged (a crash before the data reached the disk, a full disk, a hand
// edit) is recompiled and rewritten, never loaded.
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/cuda/rt/nvrtc.h"

namespace sx::cuda {

struct ProgramRequest {
  std::string name;    // for messages: "train-step-0"
  std::string source;  // several kernels, no includes
  std::string arch;    // "sm_90"
  std::vector<std::string> options;
};

// What `timing kernels N compiled in Xs, M cache hits` reports: kernels, not
// programs (a program of 40 kernels compiled counts 40).
struct KernelCounters {
  int compiled = 0;
  int hits = 0;
  int corrupt_entries = 0;  // entries found damaged, recompiled and rewritten
  double compile_seconds = 0;
};
std::string timing_kernels_line(const KernelCounters& c);  // no newline

class KernelCache {
 public:
  using Warn = std::function<void(const std::string&)>;
  // `dir` empty: no disk cache (every program is compiled). `warn` receives
  // one line, once per cache, when the directory cannot be written; the
  // default writes it to stderr as "warning: ...".
  explicit KernelCache(std::filesystem::path dir, Warn warn = {});

  // $XDG_CACHE_HOME/sexpgpu/kernels when XDG_CACHE_HOME is an absolute path,
  // else $HOME/.cache/sexpgpu/kernels; empty when neither is set.
  static std::filesystem::path default_dir();

  // The hex SHA-256 naming the program's entry.
  static std::string key(const Nvrtc& nvrtc, const ProgramRequest& req);
  std::filesystem::path entry_path(const std::string& key) const;

  // The cached program, or NVRTC's (then stored); `from_cache` says which.
  // Throws E-DEV-031 when NVRTC refuses the source. Thread-safe.
  CompiledProgram get(const Nvrtc& nvrtc, const ProgramRequest& req, bool* from_cache = nullptr);

  // The entry for `key` when present and whole; nullopt otherwise.
  std::optional<CompiledProgram> load(const std::string& key) const;

  KernelCounters counters() const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  bool store(const std::string& key, const CompiledProgram& program);
  void warn_unwritable(const std::string& why);

  std::filesystem::path dir_;
  Warn warn_;
  mutable std::mutex mutex_;
  KernelCounters counters_;
  bool warned_ = false;
};

}  // namespace sx::cuda
