#pragma once
// One long-lived thread with a big stack that runs each fuzz input in turn.
// sx::run_with_big_stack makes a thread per call, and with AddressSanitizer a
// thread's exit clears the shadow of its whole (1 GiB) stack: a fuzzer that
// did that per input would manage a few hundred inputs a second. Here the
// thread is made once. An exception escaping the work terminates the process
// (a finding, as it should be).
#include <pthread.h>
#include <sanitizer/asan_interface.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>

namespace sx_fuzz {

class BigStackWorker {
 public:
  explicit BigStackWorker(size_t bytes = size_t{1} << 30) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, bytes);
    if (pthread_create(&thread_, &attr, &BigStackWorker::loop, this) != 0) {
      std::fprintf(stderr, "fuzz: cannot start the big-stack thread\n");
      std::abort();
    }
    pthread_attr_destroy(&attr);
  }

  void run(const std::function<void()>& work) {
    std::unique_lock<std::mutex> lock(mu_);
    work_ = &work;
    done_ = false;
    cv_.notify_all();
    cv_.wait(lock, [&] { return done_; });
  }

  static BigStackWorker& get() {
    static BigStackWorker* w = new BigStackWorker();  // never joined: lives as long as the fuzzer
    return *w;
  }

 private:
  static void clear_stack_below(char* frame) {
    constexpr size_t kDeepest = size_t{160} << 20;
    ASAN_UNPOISON_MEMORY_REGION(frame - kDeepest, kDeepest);
  }

  static void* loop(void* self) {
    auto* w = static_cast<BigStackWorker*>(self);
    std::unique_lock<std::mutex> lock(w->mu_);
    while (true) {
      w->cv_.wait(lock, [&] { return w->work_ != nullptr; });
      const std::function<void()>* work = w->work_;
      lock.unlock();
      (*work)();
      // An exception thrown more than 64 MB deep (a reader or evaluator error
      // at the bottom of 8,000 levels of nesting) is unwound without ASan
      // clearing the shadow of the frames it skips ("ASan is ignoring
      // requested __asan_handle_no_return"), and the next deep input then
      // reports a false stack-buffer-overflow in them. Clear it here: the
      // 160 MB below this frame hold every frame an input of -max_len 8192
      // can make.
      clear_stack_below(static_cast<char*>(__builtin_frame_address(0)));
      lock.lock();
      w->work_ = nullptr;
      w->done_ = true;
      w->cv_.notify_all();
    }
    return nullptr;
  }

  pthread_t thread_{};
  std::mutex mu_;
  std::condition_variable cv_;
  const std::function<void()>* work_ = nullptr;
  bool done_ = false;
};

}  // namespace sx_fuzz
