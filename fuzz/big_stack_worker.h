#pragma once
// One long-lived thread with a big stack that runs each fuzz input in turn.
// sx::run_with_big_stack makes a thread per call, and with AddressSanitizer a
// thread's exit clears the shadow of its whole (1 GiB) stack: a fuzzer that
// did that per input would manage a few hundred inputs a second. Here the
// thread is made once. An exception escaping the work terminates the process
// (a finding, as it should be).
#include <pthread.h>

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
  static void* loop(void* self) {
    auto* w = static_cast<BigStackWorker*>(self);
    std::unique_lock<std::mutex> lock(w->mu_);
    while (true) {
      w->cv_.wait(lock, [&] { return w->work_ != nullptr; });
      const std::function<void()>* work = w->work_;
      lock.unlock();
      (*work)();
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
