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

ThreadPool::ThreadPool(int threads)
    : threads_(std::max(1, threads)), claimed_(new std::atomic<uint32_t>[std::max(1, threads)]) {
  for (int t = 0; t < threads_; ++t) claimed_[t].store(0, std::memory_order_relaxed);
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

// Block t of `generation` goes to whoever moves claimed_[t] to it first. Every
// block of a generation is claimed before the next one starts, so the one
// before it is generation - 1.
bool ThreadPool::claim(int t, uint32_t generation) {
  uint32_t before = generation - 1;
  return claimed_[t].compare_exchange_strong(before, generation, std::memory_order_acq_rel);
}

void ThreadPool::dispatch(int64_t tasks, Call call, void* fn) {
  call_ = call, fn_ = fn, tasks_ = tasks;
  pending_.store(threads_ - 1, std::memory_order_relaxed);
  uint32_t generation = generation_.fetch_add(1, std::memory_order_release) + 1;
  generation_.notify_all();
  share(0);
  // Blocks whose worker has not started yet: run them here.
  for (int t = 1; t < threads_; ++t)
    if (claim(t, generation)) {
      share(t);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
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
    if (!claim(t, seen)) continue;  // the caller ran it
    share(t);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

}  // namespace sx::cpu
