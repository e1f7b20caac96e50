// bench/gemm_ab.sh's harness: the gemm of this build (namespace sx) and a
// variant of it (the same sources but for the files a folder replaces,
// built with its namespace renamed to sxB; gemm_ab_variant.cpp) alternating
// in one process, so that the machine's drift between runs (a VM's
// neighbours, its clock) falls on both alike: on one thread the one-thread
// product (`gemm(g, scratch)`), on more each side's pool and the pooled
// product that a step's large products take. Prints, per shape, each
// side's best and median GFLOP/s over the rounds, the variant's speed
// relative to the build's, and whether the two gave the same bits (exit 1
// where not).
//
//   sexpgpu-gemm-ab M N K TA [ROUNDS] [THREADS] [BF16] [EXTRAS]
//
// TA: 0 A [m, k] and B [k, n]; 1 A [k, m] (op(A) transposed); 2 B [n, k]
// (op(B) transposed); 3 both. BF16 = 1: the bf16 product (gemm.h's bf16; on the bf16 units where the
// build uses them, both sides alike). EXTRAS: 0 none; 1 a bias (and of a
// bf16 product its output's round, gemm.h's round_output), as a linear
// under the precision; 2 that and a gelu of C into a buffer of its own
// (Gemm::Then::Gelu), as the MLP's first linear.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backend/cpu/gemm.h"

extern "C" {
void* sx_gemm_ab_variant_pool(int threads);
void sx_gemm_ab_variant_free_pool(void* pool);
void sx_gemm_ab_variant(const void* g, void* pool, float* shared, float* const* scratch);
}

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s M N K TA [ROUNDS] [THREADS]\n", argv[0]);
    return 2;
  }
  int64_t m = std::atol(argv[1]), n = std::atol(argv[2]), k = std::atol(argv[3]);
  int layout = std::atoi(argv[4]);
  bool ta = (layout & 1) != 0, tb = (layout & 2) != 0;
  int rounds = argc > 5 ? std::max(1, std::atoi(argv[5])) : 20;
  int threads = argc > 6 ? std::max(1, std::atoi(argv[6])) : 1;
  bool bf16 = argc > 7 && std::atoi(argv[7]) != 0;
  int extras = argc > 8 ? std::atoi(argv[8]) : 0;
  bool cold = argc > 9 && std::atoi(argv[9]) != 0;
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)), c(static_cast<size_t>(m * n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 97) / 97.0f - 0.5f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 89) / 89.0f - 0.5f;
  std::vector<std::vector<float>> scratches(static_cast<size_t>(threads),
                                            std::vector<float>(static_cast<size_t>(sx::cpu::gemm_thread_floats(n))));
  std::vector<float> bias(static_cast<size_t>(n)), gelu(extras >= 2 ? c.size() : 0);
  for (size_t j = 0; j < bias.size(); ++j) bias[j] = static_cast<float>(j % 13) / 13.0f - 0.5f;
  std::vector<float*> scratch;
  for (auto& s : scratches) scratch.push_back(s.data());
  std::vector<float> shared(static_cast<size_t>(sx::cpu::gemm_shared_floats(m, k, n)));
  sx::cpu::ThreadPool pool(threads);
  void* variant_pool = threads > 1 ? sx_gemm_ab_variant_pool(threads) : nullptr;
  sx::cpu::Gemm g{.m = m,
                  .n = n,
                  .k = k,
                  .a = a.data(),
                  .lda = ta ? m : k,
                  .ta = ta,
                  .b = b.data(),
                  .ldb = tb ? k : n,
                  .tb = tb,
                  .c = c.data(),
                  .ldc = n,
                  .bf16 = bf16};
  if (extras >= 1) g.bias = bias.data(), g.round_output = bf16;
  if (extras >= 2) g.then = sx::cpu::Gemm::Then::Gelu, g.then_out = gelu.data(), g.ldo = n;
  auto run = [&](int side) {
    if (side == 1) return sx_gemm_ab_variant(&g, variant_pool, shared.data(), scratch.data());
    if (threads > 1) return sx::cpu::gemm(g, pool, shared.data(), scratch.data());
    sx::cpu::gemm(g, scratch[0]);
  };
  // The variant's C against the build's, bit for bit (a variant may change
  // the speed, never a bit: gemm.h).
  run(0);
  std::vector<float> want = c;
  std::fill(c.begin(), c.end(), 0.0f);
  run(1);
  bool same = std::memcmp(want.data(), c.data(), c.size() * sizeof(float)) == 0;
  // COLD: before each call, 64 MiB written over, so that the operands come
  // from memory as a step's activations do, not from the caches of the call
  // before (then one call is timed, not the mean of three).
  std::vector<char> evict(cold ? size_t{64} << 20 : 0);
  std::vector<double> t[2];
  for (int r = 0; r < rounds; ++r)
    for (int side = 0; side < 2; ++side) {
      int calls = cold ? 1 : 3;
      if (cold) std::memset(evict.data(), r + side, evict.size());
      auto t0 = std::chrono::steady_clock::now();
      for (int q = 0; q < calls; ++q) run(side);
      t[side].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / calls);
    }
  if (variant_pool) sx_gemm_ab_variant_free_pool(variant_pool);
  for (auto& s : t) std::sort(s.begin(), s.end());
  double gf = 2.0 * static_cast<double>(m * n * k) / 1e9;
  size_t mid = t[0].size() / 2;
  const char* extra[] = {"", " +bias", " +bias+gelu"};
  std::printf("| %ldx%ldx%ld ta=%d tb=%d%s%s%s | %.1f / %.1f | %.1f / %.1f | %.3f / %.3f | %s |\n",
              static_cast<long>(m), static_cast<long>(n), static_cast<long>(k), ta ? 1 : 0, tb ? 1 : 0,
              bf16 ? " bf16" : "", extra[std::clamp(extras, 0, 2)], cold ? " cold" : "", gf / t[0][0], gf / t[0][mid],
              gf / t[1][0], gf / t[1][mid], t[0][0] / t[1][0], t[0][mid] / t[1][mid], same ? "yes" : "NO");
  return same ? 0 : 1;
}
