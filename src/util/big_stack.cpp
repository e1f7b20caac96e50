#include "util/big_stack.h"

#include <pthread.h>

#include <exception>

#include "util/error.h"

namespace sx {

namespace {
struct Job {
  const std::function<void()>* work;
  std::exception_ptr error;
};

void* trampoline(void* p) {
  auto* job = static_cast<Job*>(p);
  try {
    (*job->work)();
  } catch (...) {
    job->error = std::current_exception();
  }
  return nullptr;
}
}  // namespace

void run_with_big_stack(const std::function<void()>& work, size_t bytes) {
  Job job{&work, nullptr};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, bytes);
  pthread_t thread;
  int rc = pthread_create(&thread, &attr, trampoline, &job);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    work();  // no thread to be had: run here, with the default stack
    return;
  }
  pthread_join(thread, nullptr);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace sx
