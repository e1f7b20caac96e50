// The machine's sgemm ceiling for bench/run.sh: OpenBLAS sgemm, one thread of
// OpenBLAS per worker (as the executor calls it), run by 1 and by all workers
// at once on their own matrices, at the shapes a medium step multiplies.
//
//   sexpgpu-sgemm-ceiling [seconds-per-shape] [workers]
//
// Prints one JSON line: per shape, GFLOP/s on one worker and on all workers
// together; "ceiling" is the best all-workers figure.
#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Shape {
  int m, n, k;
  const char* what;
};

// GFLOP/s of `workers` threads, each multiplying its own matrices for `seconds`.
double measure(const Shape& s, int workers, double seconds) {
  std::atomic<int64_t> calls{0};
  std::vector<std::thread> ts;
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  auto start = std::chrono::steady_clock::now();
  for (int w = 0; w < workers; ++w)
    ts.emplace_back([&] {
      std::vector<float> a(size_t(s.m) * s.k, 0.5f), b(size_t(s.k) * s.n, 0.25f), c(size_t(s.m) * s.n);
      int64_t mine = 0;
      do {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.n,
                    0.0f, c.data(), s.n);
        ++mine;
      } while (std::chrono::steady_clock::now() < until);
      calls += mine;
    });
  for (auto& t : ts) t.join();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return 2.0 * s.m * s.n * s.k * static_cast<double>(calls) / wall / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
  int workers = argc > 2 ? std::atoi(argv[2]) : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  openblas_set_num_threads(1);
  const Shape shapes[] = {
      {1024, 1024, 1024, "square 1024"},
      {2048, 1024, 256, "medium mlp.fc: [2048,256]x[256,1024]"},
      {2048, 256, 1024, "medium mlp.proj: [2048,1024]x[1024,256]"},
  };
  std::string out = "{\"workers\": " + std::to_string(workers) + ", \"shapes\": [";
  double ceiling = 0, one_best = 0;
  for (const Shape& s : shapes) {
    double one = measure(s, 1, seconds), all = measure(s, workers, seconds);
    ceiling = std::max(ceiling, all), one_best = std::max(one_best, one);
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s{\"shape\": \"%s\", \"one\": %.1f, \"all\": %.1f}", &s == shapes ? "" : ", ",
                  s.what, one, all);
    out += buf;
  }
  char buf[128];
  std::snprintf(buf, sizeof buf, "], \"one_worker\": %.1f, \"ceiling\": %.1f}", one_best, ceiling);
  std::printf("%s%s\n", out.c_str(), buf);
}
