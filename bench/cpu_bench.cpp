// Times the CPU backend on a GPT-like training step (forward, cross-entropy,
// autodiff's backward: every param's gradient) at three sizes, and measures
// the sgemm ceiling in the same run. Threads: SEXPGPU_THREADS (default: all
// cores). To compare another framework, add a benchmark with the same
// GptShape and the same counters.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include "autodiff/autodiff.h"
#include "backend/cpu/executor.h"
#include "backend/cpu/gemm.h"
#include "backend/ref/ref.h"
#include "graph/build.h"
#include "graph/precision.h"
#include "testing/gpt_graph.h"

namespace {

using namespace sx;

int threads() {
  const char* env = std::getenv("SEXPGPU_THREADS");
  int n = env ? std::atoi(env) : 0;
  return n > 0 ? n : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// SEXPGPU_BENCH_ISA=avx2 (or baseline) caps the kernels' instruction set
// (isa.h's set_isa), so that an AVX-512 machine can profile the step that a
// Zen 3 runs. Set before the first step is built; another name is refused.
const bool kIsaSet = [] {
  const char* env = std::getenv("SEXPGPU_BENCH_ISA");
  cpu::Isa want;
  if (!env) return false;
  if (!cpu::find_isa(env, &want)) {
    std::fprintf(stderr, "SEXPGPU_BENCH_ISA=%s: expected baseline, avx2 or avx512\n", env);
    std::exit(2);
  }
  cpu::set_isa(want);
  return true;
}();

// The configurations of bench/run.sh and docs/performance.md.
const cpu::GptShape kShapes[] = {
    {.batch = 8, .seq = 16, .vocab = 32, .d = 32, .heads = 4, .layers = 2},      // tiny
    {.batch = 16, .seq = 64, .vocab = 256, .d = 128, .heads = 4, .layers = 4},   // small
    {.batch = 16, .seq = 128, .vocab = 512, .d = 256, .heads = 8, .layers = 6},  // medium
};

// One training step's graph, plan, executor and data, built once.
struct Step {
  Graph g;
  std::vector<NodeId> outputs;
  std::map<std::string, ref::Tensor<float>> params;
  std::vector<int32_t> tokens, targets;
  std::unique_ptr<cpu::CpuExecutor> ex;
  plan::Plan plan;

  // bf16: `:precision bf16`'s graph (graph/precision.h: the products' operands and outputs rounded).
  Step(const cpu::GptShape& s, int threads, bool bf16 = false) {
    g.builtin_taps = false;
    NodeId loss = cpu::build_gpt(g, s).loss;
    if (bf16) {
      std::vector<NodeId> map;
      g = round_products_bf16(g, {loss}, &map);
      loss = map[loss];
    }
    Gradients grads = backward(g, loss);
    outputs.push_back(loss);
    for (const auto& [path, id] : grads.params) outputs.push_back(id);
    plan = plan::make_plan(g, outputs);
    ex = std::make_unique<cpu::CpuExecutor>(g, plan, threads);
    uint32_t stream = 0;
    for (const auto& [path, id] : g.params()) {
      params[path] = ref::init_param<float>(g.node(id), 1, stream++);
      ex->bind_param(path, params[path].f.data());
    }
    std::mt19937 rng(7);
    for (int64_t k = 0; k < s.batch * s.seq; ++k) {
      tokens.push_back(static_cast<int32_t>(rng() % s.vocab));
      targets.push_back(static_cast<int32_t>(rng() % s.vocab));
    }
    std::memcpy(ex->input("tokens"), tokens.data(), tokens.size() * 4);
    std::memcpy(ex->input("targets"), targets.data(), targets.size() * 4);
  }
};

// Where a step's time goes, by op, over a few extra profiled steps.
void print_profile(Step& step, int steps) {
  step.ex->set_profiling(true);
  for (int i = 0; i < steps; ++i) step.ex->run(i);
  step.ex->set_profiling(false);
  std::vector<std::pair<double, int>> by_op;
  double total = 0;
  for (int op = 0; op < kNumOps; ++op) {
    double ms = 1e3 * step.ex->op_seconds()[op] / steps;
    if (ms > 0) by_op.push_back({ms, op}), total += ms;
  }
  std::sort(by_op.rbegin(), by_op.rend());
  using Fuse = cpu::CpuExecutor::Fuse;
  const cpu::CpuExecutor& ex = *step.ex;
  std::printf(
      "  profile: %.2f ms/step in kernels; fused pairs: %d gelu-grad+mul, %d binary+binary, %d binary+binary+scale, "
      "%d matmul+scale, %d where+softmax, %d mul+sum/mean, %d matmul+bias, %d attention backwards by head, %d "
      "gelu, gelu-grad + mul or add and %d bf16 rounds in products, %d sum-to in products, %d layer-norm backwards by "
      "row (%d "
      "with their add); %d round-bf16 of bf16 values, %d read only by bf16 products, %d made by attention as it "
      "writes and %d permutes of attention's heads not run\n",
      total, ex.fused(Fuse::GeluGradMul), ex.fused(Fuse::Binary), ex.fused(Fuse::BinaryScale),
      ex.fused(Fuse::MatmulScale), ex.fused(Fuse::WhereSoftmax), ex.fused(Fuse::MulReduce), ex.fused(Fuse::MatmulBias),
      ex.fused(Fuse::AttentionGrad), ex.fused(Fuse::MatmulThen), ex.fused(Fuse::MatmulRound),
      ex.fused(Fuse::MatmulColumnSum), ex.fused(Fuse::LayerNormGrad), ex.fused(Fuse::LayerNormGradAdd),
      ex.skipped_rounds(), ex.operand_rounds(), ex.output_rounds(),
      ex.folded_permutes(cpu::CpuExecutor::Folded::AttentionOutput) +
          ex.folded_permutes(cpu::CpuExecutor::Folded::GradProducts));
  for (auto [ms, op] : by_op)
    if (ms >= 0.001 * total)
      std::printf("    %-14s %8.2f ms %5.1f%%\n", op_name(static_cast<Op>(op)), ms, 100 * ms / total);
}

void BM_TrainStep(benchmark::State& state) {
  const cpu::GptShape& s = kShapes[state.range(0)];
  Step step(s, threads(), state.range(1) != 0);
  uint64_t n = 0;
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) step.ex->run(n++);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int64_t params = 0;
  for (const auto& [path, t] : step.params) params += t.numel();
  state.SetItemsProcessed(state.iterations() * s.batch * s.seq);  // tokens/s
  state.counters["ms_per_step"] = 1e3 * seconds / static_cast<double>(state.iterations());
  state.counters["params"] = static_cast<double>(params);
  state.counters["nodes"] = static_cast<double>(step.plan.schedule.size());
  state.counters["arena_MiB"] = static_cast<double>(step.plan.arena_bytes) / (1 << 20);
  state.counters["unplanned_MiB"] = static_cast<double>(step.plan.total_bytes) / (1 << 20);  // no reuse
  state.counters["in_place"] = step.plan.in_place;
  state.counters["views"] = step.plan.aliases;
  state.counters["loss"] = step.ex->f32(step.outputs[0])[0];
  state.SetLabel(std::to_string(step.ex->threads()) + " threads, " + cpu::isa_name(cpu::isa()));
  if (std::getenv("SEXPGPU_BENCH_PROFILE")) print_profile(step, 3);
}
BENCHMARK(BM_TrainStep)
    ->ArgNames({"size", "bf16"})
    ->ArgsProduct({{0, 1, 2}, {0}})
    ->Args({2, 1})  // the medium config with :precision bf16
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The ceiling: one OpenBLAS sgemm on one thread (as the executor calls it).
void BM_Sgemm1Thread(benchmark::State& state) {
  int n = static_cast<int>(state.range(0));
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  openblas_set_num_threads(1);
  for (auto _ : state)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a.data(), n, b.data(), n, 0, c.data(), n);
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Sgemm1Thread)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

// The executor's matmul with SEXPGPU_THREADS threads: tiles over our pool.
void BM_MatmulExecutor(benchmark::State& state) {
  int64_t n = state.range(0);
  Graph g;
  NodeId a = ops::input(g, "a", {n, n}, DType::F32), b = ops::input(g, "b", {n, n}, DType::F32);
  NodeId c = ops::matmul(g, a, b);
  plan::Plan p = plan::make_plan(g, {c});
  cpu::CpuExecutor ex(g, p, threads());
  std::fill_n(static_cast<float*>(ex.input("a")), n * n, 0.5f);
  std::fill_n(static_cast<float*>(ex.input("b")), n * n, 0.25f);
  for (auto _ : state) ex.run();
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  state.SetLabel(std::to_string(ex.threads()) + " threads");
}
BENCHMARK(BM_MatmulExecutor)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

// One causal attention of the medium config's shape (size 2: batch 16, 8
// heads, 128 positions, head size 32) or the tiny one's (size 0: 8, 4, 16,
// 8), forward only (backward: 0) or with autodiff's backward (1: the
// gradients of q, k, v for a random dO), effective GFLOP/s counting the
// causal half of each product; bf16 1: `:precision bf16`'s graph.
void BM_Attention(benchmark::State& state) {
  const bool tiny = state.range(1) == 0;
  const int64_t b = tiny ? 8 : 16, h = tiny ? 4 : 8, t = tiny ? 16 : 128, d = tiny ? 8 : 32;
  Graph g;
  g.builtin_taps = false;
  std::vector<NodeId> qkv;
  for (const char* name : {"q", "k", "v"}) qkv.push_back(ops::param(g, name, {b, h, t, d}, {}));
  NodeId o = ops::attention(g, qkv[0], qkv[1], qkv[2], /*causal=*/true);
  std::vector<NodeId> outputs{o};
  if (state.range(0)) {
    NodeId loss = ops::sum_all(g, ops::mul(g, o, ops::input(g, "r", {b, h, t, d}, DType::F32)));
    if (state.range(2)) {
      std::vector<NodeId> map;
      g = round_products_bf16(g, {loss}, &map);
      loss = map[loss];
    }
    Gradients grads = backward(g, loss);
    outputs = {loss};
    for (const auto& [path, id] : grads.params) outputs.push_back(id);
  }
  plan::Plan p = plan::make_plan(g, outputs);
  cpu::CpuExecutor ex(g, p, threads());
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::map<std::string, std::vector<float>> values;
  for (const auto& [path, id] : g.params()) {
    values[path].resize(b * h * t * d);
    for (float& x : values[path]) x = nd(rng);
    ex.bind_param(path, values[path].data());
  }
  if (state.range(0))
    for (int64_t i = 0; i < b * h * t * d; ++i) static_cast<float*>(ex.input("r"))[i] = nd(rng);
  for (auto _ : state) ex.run();
  double products = state.range(0) ? 7 : 2;  // forward: q k^T, P v; backward adds its recomputed q k^T and 4 more
  state.counters["GFLOP/s"] = benchmark::Counter(products * b * h * t * t * d * state.iterations() / 1e9,
                                                 benchmark::Counter::kIsRate);  // 2 t t d each, halved
  state.counters["regions"] = ex.fused(cpu::CpuExecutor::Fuse::AttentionGrad);
  state.SetLabel(std::to_string(ex.threads()) + " threads");
}
BENCHMARK(BM_Attention)
    ->ArgNames({"backward", "size", "bf16"})
    ->ArgsProduct({{0, 1}, {2, 0}, {0}})
    ->Args({1, 2, 1})  // the medium config's, with its backward, under :precision bf16
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// The permute that moves attention's heads ([b, t, h, d] -> [b, h, t, d]),
// as the executor runs it, of the medium config's shape (size 2: rows of
// d = 32 floats) or the tiny one's (size 0: [8, 16, 4, 8], rows of 8).
void BM_Permute(benchmark::State& state) {
  Graph g;
  g.builtin_taps = false;
  ops::Dims shape = state.range(0) == 0 ? ops::Dims{8, 16, 4, 8} : ops::Dims{16, 128, 8, 32};
  NodeId x = ops::param(g, "x", shape, {});
  NodeId y = ops::permute(g, x, {0, 2, 1, 3});
  plan::Plan p = plan::make_plan(g, {y});
  cpu::CpuExecutor ex(g, p, threads());
  std::vector<float> values(static_cast<size_t>(shape[0] * shape[1] * shape[2] * shape[3]), 1.0f);
  ex.bind_param("x", values.data());
  for (auto _ : state) ex.run();
  state.counters["GB/s"] = benchmark::Counter(2.0 * 4 * values.size() * state.iterations() / 1e9,
                                              benchmark::Counter::kIsRate);  // read and written
  state.SetLabel(std::to_string(ex.threads()) + " threads");
}
BENCHMARK(BM_Permute)->ArgName("size")->Arg(0)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

// One bf16 product (`:precision bf16`'s) of n x n x n on one thread, on the
// f32 units (units 0: two fused multiply-adds a pair) or the bf16 units
// (units 1: one vdpbf16ps a pair, where the CPU has AVX512-BF16): the same
// bits (gemm_blocking_test), the speed of each.
void BM_GemmBf16(benchmark::State& state) {
  int64_t n = state.range(0);
  bool units = state.range(1) != 0;
  if (cpu::set_gemm_bf16_units(units) != units) {
    state.SkipWithError("this CPU has no AVX512-BF16");
    return;
  }
  std::vector<float> a(n * n), b(n * n), c(n * n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& x : a) x = u(rng);
  for (float& x : b) x = u(rng);
  std::vector<float> scratch(static_cast<size_t>(cpu::gemm_thread_floats(n)));
  cpu::Gemm g{
      .m = n, .n = n, .k = n, .a = a.data(), .lda = n, .b = b.data(), .ldb = n, .c = c.data(), .ldc = n, .bf16 = true};
  for (auto _ : state) cpu::gemm(g, scratch.data());
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  state.SetLabel(units ? "bf16 units" : "f32 units");
  cpu::set_gemm_bf16_units(false);
}
BENCHMARK(BM_GemmBf16)
    ->ArgNames({"n", "units"})
    ->Args({1024, 0})
    ->Args({1024, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// One core's peak in registers (gemm.h's measure_unit_rates, which decides
// the units a bf16 product runs on): GFLOP/s of the f32 units' fused
// multiply-adds and of the bf16 units' vdpbf16ps, a step two FLOPs.
void BM_UnitRates(benchmark::State& state) {
  cpu::UnitRates best;
  for (auto _ : state) {
    cpu::UnitRates r = cpu::measure_unit_rates();
    best.f32 = std::max(best.f32, r.f32), best.bf16 = std::max(best.bf16, r.bf16);
  }
  if (best.bf16 == 0) return state.SkipWithError("this CPU has no AVX512-BF16");
  state.counters["f32_GFLOP/s"] = 2 * best.f32;
  state.counters["bf16_GFLOP/s"] = 2 * best.bf16;
  state.SetLabel(cpu::bf16_units_pay(best) ? "bf16 products on the bf16 units" : "bf16 products on the f32 units");
}
BENCHMARK(BM_UnitRates)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
