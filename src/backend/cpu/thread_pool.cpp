#include "backend/cpu/thread_pool.h"

#include <algorithm>

namespace sx::cpu {

namespace {
// Steps are a few hundred short kernels: spinning briefly before sleeping
// saves a futex round trip per kernel; sleeping keeps oversubscribed runs
// (more threads than cores) from burning the cores the others need.
constexpr int kSpins = 4000;

inline void relax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}
}  // namespace

ThreadPool::ThreadPool(int threads) : threads_(std::max(1, threads)) {
  workers_.reserve(threads_ - 1);
  for (int t = 1; t < threads_; ++t) workers_.emplace_back([this, t] { work(t); });
}

ThreadPool::~ThreadPool() {
  stop_ = true;
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::share(int t) {
  int64_t b = tasks_ * t / threads_, e = tasks_ * (t + 1) / threads_;
  if (b < e) call_(fn_, b, e, t);
}

void ThreadPool::dispatch(int64_t tasks, Call call, void* fn) {
  call_ = call, fn_ = fn, tasks_ = tasks;
  pending_.store(threads_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  share(0);
  for (int spin = 0; pending_.load(std::memory_order_acquire) != 0; ++spin) {
    if (spin < kSpins) {
      relax();
      continue;
    }
    int v = pending_.load(std::memory_order_acquire);
    if (v != 0) pending_.wait(v, std::memory_order_acquire);
  }
}

void ThreadPool::work(int t) {
  uint32_t seen = 0;
  for (;;) {
    for (int spin = 0; generation_.load(std::memory_order_acquire) == seen; ++spin) {
      if (spin < kSpins)
        relax();
      else
        generation_.wait(seen, std::memory_order_acquire);
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stop_) return;
    share(t);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

}  // namespace sx::cpu
