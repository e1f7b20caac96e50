#pragma once
// The run's timing block (outputs.md, "The timing block").
#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace sx {

class Stopwatch {
 public:
  Stopwatch() : t0_(std::chrono::steady_clock::now()) {}
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }

 private:
  std::chrono::steady_clock::time_point t0_;
};

// The nearest-rank percentile p (0 < p <= 100) of xs; xs need not be sorted.
double nearest_rank(std::vector<double> xs, double p);

struct Timings {
  double graph_s = 0, device_open_s = 0;
  int64_t first_step = 0;      // 0-based index of this session's first step (the resume step)
  std::vector<double> step_s;  // this session's steps, in order
  std::vector<double> pass_s;  // this session's passes, in order
  double total_s = 0;          // the step loop including passes
  // On a GPU: its `timing kernels` line (no newline), and the `memory: peak`
  // line after the block, each as it stands when the block is printed.
  std::function<std::string()> kernels_line = [] {
    return std::string("timing kernels 0 compiled in 0.000s, 0 cache hits");
  };
  std::function<std::string()> memory_line;
  // The six lines, each ending in '\n'.
  std::string block() const;
};

}  // namespace sx
