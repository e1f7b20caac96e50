#pragma once
// A SIMT shim (test-only): CUDA C++ kernel text compiled as host C++ and run
// on the CPU, so that the very source NVRTC compiles is executed in CI
// without a GPU. Each CUDA thread of a block is a fiber (ucontext); blocks run
// one after another. `__syncthreads` is a block barrier and the warp
// intrinsics exchange values within a warp of 32 consecutive threads. Fibers
// run up to their next barrier in thread order, or in reverse order
// (Order::reverse), so a missing barrier shows as wrong numbers in one of the
// two; a barrier not every thread reaches (divergent, or after an early
// return) is reported as an error instead of hanging.
//
// Not modelled: dynamic (`extern __shared__`) shared memory, atomics,
// partial-warp masks, memory fences. `__shared__` variables are function
// statics, so they keep the previous block's values (as uninitialised shared
// memory may): vary a test's inputs between launches.
//
// Used through simt_run.h (which compiles a .cu file with this header
// force-included into a shared object); the only entry point is
// simt_run_grid.
#include <ucontext.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <source_location>
#include <string>
#include <type_traits>
#include <vector>

#pragma GCC visibility push(hidden)

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
using uint3 = dim3;

namespace simt {

constexpr unsigned kWarp = 32;

struct Fiber {
  ucontext_t context{};
  dim3 thread_idx;
  unsigned linear = 0;
  bool done = false;
  const char* waits_at = nullptr;  // "__syncthreads", "__shfl_xor_sync", ...
  unsigned waits_line = 0;
};

struct Warp {
  unsigned arrived = 0;
  uint64_t generation = 0;
  unsigned line = 0;
  uint64_t slots[2][kWarp] = {};  // double-buffered by generation: see warp_exchange
};

struct Runtime {
  dim3 grid, block, block_idx;
  unsigned threads = 0;
  std::vector<Fiber> fibers;
  std::vector<std::unique_ptr<char[]>> stacks;  // one per thread, reused by every block (no mmap per fiber)
  std::vector<Warp> warps;
  Fiber* current = nullptr;
  ucontext_t scheduler{};
  unsigned barrier_arrived = 0, barrier_line = 0;
  uint64_t barrier_generation = 0;
  uint64_t progress = 0;  // bumped on every arrival or exit; a pass without it is a deadlock
  std::string error;
  void (*thunk)(void*) = nullptr;
  void* thunk_context = nullptr;
};

inline Runtime*& runtime() {
  static thread_local Runtime* r = nullptr;
  return r;
}

inline void yield() {
  Runtime& r = *runtime();
  swapcontext(&r.current->context, &r.scheduler);
}

// Records the first error and never returns to the kernel: the scheduler
// abandons the launch.
[[noreturn]] inline void fail(std::string what) {
  Runtime& r = *runtime();
  if (r.error.empty()) r.error = std::move(what);
  for (;;) yield();
}

inline void wait_while(const uint64_t& generation, uint64_t seen, const char* what, unsigned line) {
  Fiber& f = *runtime()->current;
  f.waits_at = what;
  f.waits_line = line;
  while (generation == seen) yield();
  f.waits_at = nullptr;
}

inline void syncthreads(unsigned line) {
  Runtime& r = *runtime();
  if (r.barrier_arrived == 0) r.barrier_line = line;
  if (r.barrier_line != line)
    fail("divergent barrier: threads of block (" + std::to_string(r.block_idx.x) + "," + std::to_string(r.block_idx.y) +
         "," + std::to_string(r.block_idx.z) + ") reached __syncthreads on lines " + std::to_string(r.barrier_line) +
         " and " + std::to_string(line));
  uint64_t seen = r.barrier_generation;
  ++r.barrier_arrived;
  ++r.progress;
  if (r.barrier_arrived == r.threads) {
    r.barrier_arrived = 0;
    ++r.barrier_generation;
  } else {
    wait_while(r.barrier_generation, seen, "__syncthreads", line);
  }
}

// Every lane of the calling thread's warp deposits `bits`; returns the
// deposited slots once all have. The slots of one generation stay intact
// until every lane has arrived at the next exchange, so reading them after
// release is safe.
inline const uint64_t* warp_exchange(unsigned mask, uint64_t bits, const char* what, unsigned line) {
  Runtime& r = *runtime();
  Fiber& f = *r.current;
  unsigned w = f.linear / kWarp, lane = f.linear % kWarp;
  unsigned lanes = std::min(kWarp, r.threads - w * kWarp);
  unsigned present = lanes == kWarp ? 0xffffffffu : ((1u << lanes) - 1);
  if ((mask & present) != present)
    fail(std::string(what) + " with mask " + std::to_string(mask) + ": the shim runs whole warps only");
  Warp& warp = r.warps[w];
  if (warp.arrived == 0) warp.line = line;
  if (warp.line != line)
    fail(std::string("divergent warp: lanes of warp ") + std::to_string(w) + " reached warp intrinsics on lines " +
         std::to_string(warp.line) + " and " + std::to_string(line));
  uint64_t seen = warp.generation;
  warp.slots[seen & 1][lane] = bits;
  ++warp.arrived;
  ++r.progress;
  if (warp.arrived == lanes) {
    warp.arrived = 0;
    ++warp.generation;
  } else {
    wait_while(warp.generation, seen, what, line);
  }
  return warp.slots[seen & 1];
}

template <typename T>
uint64_t to_bits(T v) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "shuffled values are at most 8 bytes");
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <typename T>
T from_bits(uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}

// `source` maps (lane, width) to the lane read, or -1 for the caller's own value.
template <typename T, typename Source>
T shuffle(unsigned mask, T v, Source source, const char* what, unsigned line) {
  Runtime& r = *runtime();
  unsigned lane = r.current->linear % kWarp;
  unsigned lanes = std::min(kWarp, r.threads - (r.current->linear / kWarp) * kWarp);
  const uint64_t* slots = warp_exchange(mask, to_bits(v), what, line);
  int s = source(static_cast<int>(lane));
  if (s < 0 || s >= static_cast<int>(lanes)) return v;
  return from_bits<T>(slots[s]);
}

inline void fiber_main() {
  Runtime& r = *runtime();
  r.thunk(r.thunk_context);
  r.current->done = true;
  ++r.progress;
}  // returns to the scheduler through uc_link

inline std::string describe_deadlock(const Runtime& r) {
  std::map<std::string, std::vector<unsigned>> groups;
  bool at_barrier = false;
  for (const auto& f : r.fibers) {
    std::string where = f.done ? std::string("exited")
                               : std::string("wait at ") + f.waits_at + " (line " + std::to_string(f.waits_line) + ")";
    if (!f.done && std::strcmp(f.waits_at, "__syncthreads") == 0) at_barrier = true;
    groups[where].push_back(f.linear);
  }
  std::string out = at_barrier ? "divergent barrier" : "deadlock";
  out += " in block (" + std::to_string(r.block_idx.x) + "," + std::to_string(r.block_idx.y) + "," +
         std::to_string(r.block_idx.z) + "):";
  for (const auto& [where, ids] : groups)
    out += " " + std::to_string(ids.size()) + " threads (first " + std::to_string(ids.front()) + ") " + where + ";";
  out.pop_back();
  return out;
}

// Runs one block; false (with r.error set) on a deadlock or a failed check.
inline bool run_block(Runtime& r, bool reverse, size_t stack_bytes) {
  r.fibers.clear();
  r.fibers.resize(r.threads);
  r.warps.assign((r.threads + kWarp - 1) / kWarp, Warp{});
  r.barrier_arrived = 0;
  while (r.stacks.size() < r.threads) r.stacks.emplace_back(new char[stack_bytes]);
  for (unsigned i = 0; i < r.threads; ++i) {
    Fiber& f = r.fibers[i];
    f.linear = i;
    f.thread_idx = dim3(i % r.block.x, (i / r.block.x) % r.block.y, i / (r.block.x * r.block.y));
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = r.stacks[i].get();
    f.context.uc_stack.ss_size = stack_bytes;
    f.context.uc_link = &r.scheduler;
    makecontext(&f.context, fiber_main, 0);
  }
  for (;;) {
    uint64_t before = r.progress;
    bool alive = false;
    for (unsigned k = 0; k < r.threads; ++k) {
      Fiber& f = r.fibers[reverse ? r.threads - 1 - k : k];
      if (f.done) continue;
      alive = true;
      r.current = &f;
      swapcontext(&r.scheduler, &f.context);
      if (!r.error.empty()) return false;
    }
    if (!alive) return true;
    if (r.progress == before) {
      r.error = describe_deadlock(r);
      return false;
    }
  }
}

}  // namespace simt

#pragma GCC visibility pop

// The launch: every block of `grid`, each thread running thunk(context).
// Returns 0, or 1 with the reason in `error`. Defined here, not inline: the
// header is force-included into the one translation unit of a .cu file.
extern "C" __attribute__((visibility("default"))) int simt_run_grid(dim3 grid, dim3 block, int reverse,
                                                                    unsigned long stack_bytes, void (*thunk)(void*),
                                                                    void* context, char* error,
                                                                    unsigned long error_size) {
  simt::Runtime r;
  r.grid = grid;
  r.block = block;
  r.threads = block.x * block.y * block.z;
  r.thunk = thunk;
  r.thunk_context = context;
  simt::runtime() = &r;
  bool ok = true;
  for (unsigned z = 0; ok && z < grid.z; ++z)
    for (unsigned y = 0; ok && y < grid.y; ++y)
      for (unsigned x = 0; ok && x < grid.x; ++x) {
        r.block_idx = dim3(x, y, z);
        ok = simt::run_block(r, reverse != 0, stack_bytes);
      }
  simt::runtime() = nullptr;
  if (!ok && error_size > 0) {
    std::snprintf(error, error_size, "%s", r.error.c_str());
  }
  return ok ? 0 : 1;
}

// ---- CUDA's names, as host C++ ----
#define __global__ __attribute__((visibility("default")))
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __shared__ static
#define __constant__
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define threadIdx (::simt::runtime()->current->thread_idx)
#define blockIdx (::simt::runtime()->block_idx)
#define blockDim (::simt::runtime()->block)
#define gridDim (::simt::runtime()->grid)
constexpr int warpSize = 32;

inline void __syncthreads(std::source_location at = std::source_location::current()) { simt::syncthreads(at.line()); }
inline void __syncwarp(unsigned mask = 0xffffffffu, std::source_location at = std::source_location::current()) {
  simt::warp_exchange(mask, 0, "__syncwarp", at.line());
}
template <typename T>
T __shfl_sync(unsigned mask, T v, int src, int width = 32, std::source_location at = std::source_location::current()) {
  return simt::shuffle(
      mask, v, [&](int lane) { return (lane / width) * width + (src % width); }, "__shfl_sync", at.line());
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32,
                  std::source_location at = std::source_location::current()) {
  return simt::shuffle(
      mask, v,
      [&](int lane) {
        int s = lane ^ lane_mask;
        return s >= (lane / width + 1) * width ? -1 : s;  // later groups: own value
      },
      "__shfl_xor_sync", at.line());
}
template <typename T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32,
                   std::source_location at = std::source_location::current()) {
  return simt::shuffle(
      mask, v,
      [&](int lane) {
        int s = lane + static_cast<int>(delta);
        return s >= (lane / width + 1) * width ? -1 : s;
      },
      "__shfl_down_sync", at.line());
}
template <typename T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32,
                 std::source_location at = std::source_location::current()) {
  return simt::shuffle(
      mask, v,
      [&](int lane) {
        int s = lane - static_cast<int>(delta);
        return s < (lane / width) * width ? -1 : s;
      },
      "__shfl_up_sync", at.line());
}
inline unsigned __ballot_sync(unsigned mask, int predicate, std::source_location at = std::source_location::current()) {
  simt::Runtime& r = *simt::runtime();
  unsigned lanes = std::min(simt::kWarp, r.threads - (r.current->linear / simt::kWarp) * simt::kWarp);
  const uint64_t* slots = simt::warp_exchange(mask, predicate != 0, "__ballot_sync", at.line());
  unsigned out = 0;
  for (unsigned l = 0; l < lanes; ++l) out |= static_cast<unsigned>(slots[l] != 0) << l;
  return out;
}
inline int __any_sync(unsigned mask, int p, std::source_location at = std::source_location::current()) {
  return __ballot_sync(mask, p, at) != 0;
}
inline int __all_sync(unsigned mask, int p, std::source_location at = std::source_location::current()) {
  simt::Runtime& r = *simt::runtime();
  unsigned lanes = std::min(simt::kWarp, r.threads - (r.current->linear / simt::kWarp) * simt::kWarp);
  unsigned present = lanes == simt::kWarp ? 0xffffffffu : ((1u << lanes) - 1);
  return __ballot_sync(mask, p, at) == present;
}

// Bit casts and fast-math intrinsics (host results: exact where CUDA's are
// approximate, so compare with tolerances).
inline unsigned __float_as_uint(float f) { return std::bit_cast<unsigned>(f); }
inline float __uint_as_float(unsigned u) { return std::bit_cast<float>(u); }
inline double __longlong_as_double(long long v) { return std::bit_cast<double>(v); }
inline int __float_as_int(float f) { return std::bit_cast<int>(f); }
inline float __int_as_float(int i) { return std::bit_cast<float>(i); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __saturatef(float x) { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __clz(unsigned x) { return x == 0 ? 32 : __builtin_clz(x); }
inline int __ffs(unsigned x) { return __builtin_ffs(static_cast<int>(x)); }
template <typename T>
T __ldg(const T* p) {
  return *p;
}
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }
