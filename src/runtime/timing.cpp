#include "runtime/timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace sx {

double nearest_rank(std::vector<double> xs, double p) {
  std::sort(xs.begin(), xs.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(xs.size())));
  return xs[std::clamp<size_t>(rank, 1, xs.size()) - 1];
}

namespace {
std::string median_p90(const std::vector<double>& xs) {
  if (xs.empty()) return "median - p90 -";
  return fmt::format("median {:.4f}s p90 {:.4f}s", nearest_rank(xs, 50), nearest_rank(xs, 90));
}
const char* plural(size_t n, const char* one, const char* many) { return n == 1 ? one : many; }
}  // namespace

std::string Timings::block() const {
  std::string out;
  out += fmt::format("timing graph {:.3f}s device-open {:.3f}s\n", graph_s, device_open_s);
  out += kernels_line() + "\n";
  std::string first = step_s.empty() ? "-" : fmt::format("{:.3f}s", step_s.front());
  std::string first_pass = pass_s.empty() ? "-" : fmt::format("{:.3f}s", pass_s.front());
  out += fmt::format("timing step-{} {} eval-0 {}\n", first_step, first, first_pass);
  std::vector<double> rest_steps(step_s.begin() + (step_s.empty() ? 0 : 1), step_s.end());
  int64_t end = first_step + static_cast<int64_t>(step_s.size());
  out += fmt::format("timing steps {}..{} {}\n", first_step + 1, std::max(end, first_step + 1), median_p90(rest_steps));
  std::vector<double> rest_passes(pass_s.begin() + (pass_s.empty() ? 0 : 1), pass_s.end());
  out += fmt::format("timing eval {} {} {}\n", rest_passes.size(), plural(rest_passes.size(), "pass", "passes"),
                     median_p90(rest_passes));
  out +=
      fmt::format("timing total {:.3f}s over {} {}\n", total_s, step_s.size(), plural(step_s.size(), "step", "steps"));
  if (memory_line) out += memory_line();
  return out;
}

}  // namespace sx
