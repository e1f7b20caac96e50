#include "runtime/nccl_api.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "util/error.h"
#include "util/toolkit_libraries.h"

namespace sx::nccl {

namespace {

// Binds every slot, or says which symbols the library lacks.
struct Binder {
  void* lib;
  std::vector<std::string> missing;
  template <typename F>
  void operator()(F& slot, const char* symbol) {
    slot = reinterpret_cast<F>(dlsym(lib, symbol));
    if (!slot) missing.emplace_back(symbol);
  }
};

void bind(Binder& b, Api& a) {
  b(a.get_version, "ncclGetVersion");
  b(a.get_error_string, "ncclGetErrorString");
  b(a.get_last_error, "ncclGetLastError");
  b(a.get_unique_id, "ncclGetUniqueId");
  b(a.comm_init_all, "ncclCommInitAll");
  b(a.comm_init_rank, "ncclCommInitRank");
  b(a.comm_destroy, "ncclCommDestroy");
  b(a.comm_abort, "ncclCommAbort");
  b(a.comm_get_async_error, "ncclCommGetAsyncError");
  b(a.all_gather, "ncclAllGather");
  b(a.all_reduce, "ncclAllReduce");
  b(a.broadcast, "ncclBroadcast");
  b(a.group_start, "ncclGroupStart");
  b(a.group_end, "ncclGroupEnd");
}

}  // namespace

std::vector<std::string> default_candidates() {
  return toolkit_library_candidates("libnccl.so.2", {"lib64/", "lib/"}, {"nvidia/nccl/lib/", "nvidia/cu13/lib/"});
}

Library load(const std::vector<std::string>& candidates) {
  Library out;
  std::vector<std::string> absent, other;
  for (const auto& path : candidates) {
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = dlerror();
      std::string text = why ? why : "not found";
      if (text.find("No such file or directory") != std::string::npos)
        absent.push_back(path);
      else
        other.push_back(path + ": " + text);
      continue;
    }
    auto api = std::make_unique<Api>();
    Binder b{lib, {}};
    bind(b, *api);
    int version = 0;
    if (b.missing.empty() && api->get_version(&version) == kSuccess) {
      // Never closed: communicators made through it live until exit.
      out.api = std::move(api);
      out.path = path;
      out.version = version;
      return out;
    }
    other.push_back(path + (b.missing.empty() ? ": ncclGetVersion failed"
                                              : fmt::format(": it lacks {}", fmt::join(b.missing, ", "))));
    dlclose(lib);
  }
  if (!absent.empty()) other.insert(other.begin(), fmt::format("no such file: {}", fmt::join(absent, ", ")));
  out.failure = other.empty() ? "no place to look" : fmt::format("{}", fmt::join(other, "; "));
  return out;
}

const Library& library() {
  static const Library lib = load(default_candidates());
  return lib;
}

const Api& require(const Library& lib) {
  if (!lib.api)
    throw UserError(
        Code::NODE_010, {},
        fmt::format("several GPUs exchange their gradients with NCCL, and libnccl.so.2 did not load: {}", lib.failure),
        "install NCCL (NVIDIA's nvidia-nccl wheel or the CUDA toolkit's), or put the folder holding "
        "libnccl.so.2 on LD_LIBRARY_PATH; or train on one GPU with SEXPGPU_DEVICES=0");
  return *lib.api;
}

std::string version_text(int version) {
  // NCCL_VERSION(X, Y, Z) is X * 10000 + Y * 100 + Z since 2.9 (X * 1000 + Y * 100 + Z before).
  if (version >= 20900) return fmt::format("{}.{}.{}", version / 10000, version / 100 % 100, version % 100);
  return fmt::format("{}.{}.{}", version / 1000, version / 100 % 10, version % 100);
}

void watch_collective(const Api& api, const std::vector<Comm>& comms, double timeout_s,
                      const std::function<bool()>& done, const std::string& what) {
  using Clock = std::chrono::steady_clock;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  auto abort_all = [&] {
    for (Comm c : comms) api.comm_abort(c);
  };
  auto pause = std::chrono::microseconds(20);
  while (!done()) {
    for (size_t r = 0; r < comms.size(); ++r) {
      Result async = kSuccess;
      Result polled = api.comm_get_async_error(comms[r], &async);
      Result bad = polled != kSuccess ? polled : async;
      if (bad == kSuccess || bad == kInProgress) continue;
      const char* last = api.get_last_error(comms[r]);
      std::string why = fmt::format("{}{}", api.get_error_string(bad), last && *last ? fmt::format(" ({})", last) : "");
      abort_all();
      throw UserError(Code::NODE_011, {}, fmt::format("NCCL failed in {} on GPU rank {}: {}", what, r, why),
                      "the last complete checkpoint is kept: run again with --resume latest");
    }
    if (Clock::now() >= deadline) {
      abort_all();
      throw UserError(
          Code::NODE_011, {},
          fmt::format("{} did not finish within SEXPGPU_NODE_TIMEOUT ({} s): a GPU did not take part", what, timeout_s),
          "the last complete checkpoint is kept: run again with --resume latest; raise "
          "SEXPGPU_NODE_TIMEOUT if a GPU is only slow");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));  // quick for short collectives, cheap for long
  }
}

}  // namespace sx::nccl
