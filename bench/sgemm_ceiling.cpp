// The machine's sgemm ceiling for bench/run.sh: the best single-precision
// product available here, at the shapes a medium step multiplies, run by 1
// and by all workers at once, each on its own matrices with one thread:
// OpenBLAS's cblas_sgemm (with the kernels OPENBLAS_CORETYPE selects; run.sh
// runs this once per core type worth trying) and sexpgpu's own gemm
// (backend/cpu/gemm.h, the one the executor calls).
//
//   sexpgpu-sgemm-ceiling [seconds-per-shape] [workers] [baseline|avx2|avx512]
//
// The third argument caps the instruction set of sexpgpu's kernels (isa.h's
// set_isa): the AVX2 kernels, which a Zen 3 runs, measured on an AVX-512
// machine against OpenBLAS's Haswell or Zen kernels (OPENBLAS_CORETYPE).
//
// Prints one JSON line: per shape and implementation, GFLOP/s on one worker
// and on all workers together; "ceiling" is the best all-workers figure of
// either, "openblas" and "sexpgpu" each one's best.
#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "backend/cpu/gemm.h"

extern "C" char* openblas_get_corename(void);

namespace {

struct Shape {
  int m, n, k;
  const char* what;
};

enum class Impl { OpenBlas, Sexpgpu };

// GFLOP/s of `workers` threads, each multiplying its own matrices for `seconds`.
double measure(const Shape& s, Impl impl, int workers, double seconds) {
  std::atomic<int64_t> calls{0};
  std::vector<std::thread> ts;
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  auto start = std::chrono::steady_clock::now();
  for (int w = 0; w < workers; ++w)
    ts.emplace_back([&] {
      std::vector<float> a(size_t(s.m) * s.k, 0.5f), b(size_t(s.k) * s.n, 0.25f), c(size_t(s.m) * s.n);
      std::vector<float> scratch(static_cast<size_t>(sx::cpu::gemm_thread_floats(s.n)));
      int64_t mine = 0;
      do {
        if (impl == Impl::OpenBlas)
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.n,
                      0.0f, c.data(), s.n);
        else
          sx::cpu::gemm({.m = s.m,
                         .n = s.n,
                         .k = s.k,
                         .a = a.data(),
                         .lda = s.k,
                         .b = b.data(),
                         .ldb = s.n,
                         .c = c.data(),
                         .ldc = s.n},
                        scratch.data());
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
  if (argc > 3) {
    sx::cpu::Isa want;
    if (!sx::cpu::find_isa(argv[3], &want)) {
      std::fprintf(stderr, "%s: instruction set %s: expected baseline, avx2 or avx512\n", argv[0], argv[3]);
      return 2;
    }
    sx::cpu::set_isa(want);
  }
  const Shape shapes[] = {
      {1024, 1024, 1024, "square 1024"},
      {2048, 1024, 256, "medium mlp.fc: [2048,256]x[256,1024]"},
      {2048, 256, 1024, "medium mlp.proj: [2048,1024]x[1024,256]"},
  };
  std::string out = "{\"workers\": " + std::to_string(workers) + ", \"openblas_core\": \"" + openblas_get_corename() +
                    "\", \"isa\": \"" + sx::cpu::isa_name(sx::cpu::isa()) + "\", \"shapes\": [";
  double best[2] = {0, 0}, one_best = 0;
  for (const Shape& s : shapes)
    for (Impl impl : {Impl::OpenBlas, Impl::Sexpgpu}) {
      double one = measure(s, impl, 1, seconds), all = measure(s, impl, workers, seconds);
      int i = static_cast<int>(impl);
      best[i] = std::max(best[i], all), one_best = std::max(one_best, one);
      char buf[256];
      std::snprintf(buf, sizeof buf, "%s{\"shape\": \"%s\", \"impl\": \"%s\", \"one\": %.1f, \"all\": %.1f}",
                    out.back() == '[' ? "" : ", ", s.what, i ? "sexpgpu" : "openblas", one, all);
      out += buf;
    }
  char buf[192];
  std::snprintf(buf, sizeof buf, "], \"openblas\": %.1f, \"sexpgpu\": %.1f, \"one_worker\": %.1f, \"ceiling\": %.1f}",
                best[0], best[1], one_best, std::max(best[0], best[1]));
  std::printf("%s%s\n", out.c_str(), buf);
}
