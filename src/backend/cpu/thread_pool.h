#pragma once
// A small persistent thread pool with a static partition. Kernels cut their
// work into tasks whose boundaries depend only on the tensor sizes, never on
// the thread count; a thread then takes a contiguous block of tasks. Since
// each task computes its outputs alone and in a fixed order, results are
// bit-identical for any number of threads. No allocation after construction.
//
// A block is run by whoever claims it first: the calling thread, once its own
// block is done, runs the blocks of workers that have not woken up yet (on a
// busy machine a descheduled worker would otherwise hold up every kernel).
// Which thread runs a block changes nothing in the results.
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace sx::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return threads_; }

  // Calls fn(begin, end, slot) over [0, tasks): block t is
  // [t * tasks / size, (t + 1) * tasks / size), run with slot t (per-slot
  // scratch is never used by two threads at once). Runs inline when there is
  // one task or one thread. `fn` must not throw.
  template <typename F>
  void run(int64_t tasks, F&& fn) {
    if (tasks <= 0) return;
    if (tasks == 1 || threads_ == 1) return fn(int64_t{0}, tasks, 0);
    dispatch(
        tasks, [](void* f, int64_t b, int64_t e, int t) { (*static_cast<F*>(f))(b, e, t); }, &fn);
  }

  // Splits [0, n) into chunks of `grain` (the last one shorter) and calls
  // fn(begin, end, thread) once per chunk.
  template <typename F>
  void for_range(int64_t n, int64_t grain, F&& fn) {
    if (grain < 1) grain = 1;
    int64_t chunks = (n + grain - 1) / grain;
    run(chunks, [&](int64_t cb, int64_t ce, int t) {
      for (int64_t c = cb; c < ce; ++c) fn(c * grain, std::min(n, (c + 1) * grain), t);
    });
  }

 private:
  using Call = void (*)(void*, int64_t, int64_t, int);
  void dispatch(int64_t tasks, Call call, void* fn);
  void work(int t);
  void share(int t);
  bool claim(int t, uint32_t generation);

  int threads_;
  std::vector<std::thread> workers_;
  Call call_ = nullptr;
  void* fn_ = nullptr;
  int64_t tasks_ = 0;
  bool stop_ = false;
  std::atomic<uint32_t> generation_{0};
  std::atomic<int> pending_{0};
  // Per block, the last generation whose block was claimed (by its worker or
  // by the caller).
  std::unique_ptr<std::atomic<uint32_t>[]> claimed_;
};

}  // namespace sx::cpu
