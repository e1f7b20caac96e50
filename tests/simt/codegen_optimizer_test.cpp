// The multi-tensor optimizer templates run by the SIMT shim against
// runtime/optimizer.cpp (PyTorch's AdamW, Adam and SGD, clip_grad_norm_):
// the same bits, step after step, with the host's scalars computed as
// Optimizer::step computes them. Tensors of several sizes share one flat
// index space whose chunks straddle them.
#include <cmath>

#include "backend/cuda/codegen/prelude.h"
#include "backend/cuda/codegen/print_cuda.h"
#include "codegen_gpt_step.h"
#include "codegen_test_util.h"
#include "lang/experiment.h"
#include "runtime/optimizer.h"

namespace sx::cuda::test {
namespace {

// sx_param_slot of the prelude, field for field.
struct ParamSlot {
  float* p;
  const float* g;
  float* m;
  float* v;
  uint16_t* p_bf16;
  long long start;
  long long n;
  float decay;
  float unused;
};
static_assert(sizeof(ParamSlot) == 64);

struct OptimizerCase {
  const char* kind;
  double weight_decay, momentum;
  bool nesterov;
  double clip;  // 0: none
};

class OptimizerTemplates : public ::testing::TestWithParam<OptimizerCase> {};

TEST_P(OptimizerTemplates, SameBitsAsTheCpuOptimizer) {
  const OptimizerCase c = GetParam();
  auto cu = compile_on_cpu("templates", codegen::template_instances_source());
  OptimizerSpec spec;
  spec.kind = c.kind;
  spec.weight_decay = c.weight_decay;
  spec.momentum = c.momentum;
  spec.nesterov = c.nesterov;
  spec.no_decay = {"b"};
  if (c.clip > 0) spec.clip = c.clip;
  const std::vector<std::pair<std::string, int64_t>> sizes = {{"b", 37}, {"g", 1100}, {"w", 700}};
  std::vector<ParamInfo> info;
  ParamStore cpu;
  for (auto& [path, n] : sizes) {
    ParamInfo pi;
    pi.path = path;
    pi.shape = Shape{n};
    info.push_back(pi);
    cpu.values[path] = values(n, static_cast<uint32_t>(n), 0.5f);
  }
  cpu.info = info;
  Optimizer cpu_opt(spec, info);
  std::map<std::string, std::vector<float>> params = cpu.values, m, v, bf16_copy;
  std::map<std::string, std::vector<uint16_t>> copy;
  for (auto& [path, n] : sizes) m[path].assign(n, 0.0f), v[path].assign(n, 0.0f), copy[path].assign(n, 0);
  const bool sgd = spec.kind == "sgd";
  for (int64_t k = 1; k <= 3; ++k) {
    const double lr = 0.01 * k;
    std::map<std::string, std::vector<float>> grads;
    std::map<std::string, const float*> grad_ptrs;
    for (auto& [path, n] : sizes) {
      grads[path] = values(n, static_cast<uint32_t>(n * 10 + k), 2.0f);
      grad_ptrs[path] = grads[path].data();
    }
    StepStats stats = cpu_opt.step(cpu, grad_ptrs, k, lr, false);

    // The scalars, as Optimizer::step computes them.
    float coef = 1.0f;
    if (spec.clip) coef = static_cast<float>(std::min(1.0, *spec.clip / (stats.grad_norm + 1e-6)));
    int clip = coef < 1.0f;
    std::vector<ParamSlot> slots;
    long long start = 0;
    for (auto& [path, n] : sizes) {
      bool decays = path != "b";
      float decay = sgd ? (decays ? static_cast<float>(spec.weight_decay) : 0.0f)
                        : static_cast<float>(1 - lr * (decays ? spec.weight_decay : 0.0));
      float* mom = sgd && spec.momentum == 0 ? nullptr : m[path].data();
      slots.push_back(
          {params[path].data(), grads[path].data(), mom, v[path].data(), copy[path].data(), start, n, decay, 0.0f});
      start += n;
    }
    const unsigned blocks = static_cast<unsigned>((start + 4 * codegen::kRowBlock - 1) / (4 * codegen::kRowBlock));
    auto order = k % 2 ? simt::Order::forward : simt::Order::reverse;
    const ParamSlot* table = slots.data();
    int count = static_cast<int>(slots.size());
    if (sgd) {
      cu->launch("sx_sgd", {blocks}, {codegen::kRowBlock}, order, table, count, start, clip, coef,
                 static_cast<float>(spec.momentum), static_cast<int>(k == 1), static_cast<int>(spec.nesterov),
                 static_cast<float>(-lr));
    } else {
      const double bc1 = 1 - std::pow(spec.beta1, static_cast<double>(k));
      const double bc2 = 1 - std::pow(spec.beta2, static_cast<double>(k));
      cu->launch("sx_adam", {blocks}, {codegen::kRowBlock}, order, table, count, start,
                 static_cast<int>(spec.kind == "adamw"), clip, coef, static_cast<float>(spec.beta1),
                 static_cast<float>(spec.beta2), static_cast<float>(1 - spec.beta1), static_cast<float>(1 - spec.beta2),
                 static_cast<float>(std::sqrt(bc2)), static_cast<float>(spec.eps), static_cast<float>(-(lr / bc1)));
    }
    for (auto& [path, n] : sizes) {
      ASSERT_EQ(0, std::memcmp(params[path].data(), cpu.values[path].data(), n * sizeof(float)))
          << c.kind << " step " << k << " " << path << ": " << params[path][0] << " vs " << cpu.values[path][0];
      EXPECT_EQ(copy[path], to_bf16(cpu.values[path])) << "the bf16 copy of " << path;
      if (!sgd)
        EXPECT_EQ(0, std::memcmp(m[path].data(), cpu_opt.state()[spec.kind + ".m/" + path].data(), n * 4)) << path;
      else if (spec.momentum != 0)
        EXPECT_EQ(0, std::memcmp(m[path].data(), cpu_opt.state()["sgd.momentum/" + path].data(), n * 4)) << path;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, OptimizerTemplates,
                         ::testing::Values(OptimizerCase{"adamw", 0.1, 0, false, 0},
                                           OptimizerCase{"adamw", 0.1, 0, false, 0.5},
                                           OptimizerCase{"adam", 0.0, 0, false, 0},
                                           OptimizerCase{"sgd", 0.01, 0.9, true, 0},
                                           OptimizerCase{"sgd", 0.0, 0.0, false, 0.5}));

// The printed optimizer kernels (kir::build_optimizer: the global norm, then
// the update), run by the shim, against Optimizer::step: AdamW with
// clipping, bit for bit, with the bf16 copies.
TEST(PrintedOptimizer, AdamwWithClippingSameBitsAsTheCpuOptimizer) {
  const std::vector<std::pair<std::string, int64_t>> sizes = {{"a", 300}, {"b", 37}};
  OptimizerSpec spec;
  spec.kind = "adamw";
  spec.weight_decay = 0.1;
  spec.no_decay = {"b"};
  spec.clip = 0.5;
  kir::OptimizerParams o;
  o.algorithm = kir::Optimizer::Algorithm::AdamW;
  o.clip = *spec.clip;
  o.bf16_copies = true;
  std::vector<ParamInfo> info;
  ParamStore cpu;
  for (auto& [path, n] : sizes) {
    ParamInfo pi;
    pi.path = path;
    pi.shape = Shape{n};
    info.push_back(pi);
    cpu.values[path] = values(n, static_cast<uint32_t>(n), 0.5f);
    o.tensors.push_back({path, n, path != "b"});
  }
  cpu.info = info;
  Optimizer cpu_opt(spec, info);
  kir::Kernel norm = kir::build_optimizer(o, kir::Optimizer::Stage::GradNorm, "opt_norm");
  kir::Kernel update = kir::build_optimizer(o, kir::Optimizer::Stage::Update, "opt_update");
  auto programs = codegen::print_programs({&norm, &update});
  ASSERT_EQ(programs.size(), 1u);
  auto cu = compile_on_cpu("printed-optimizer", programs[0].source + wrappers({norm, update}));
  std::map<std::string, std::vector<float>> memory;  // by buffer name, shared by the two kernels
  std::map<std::string, std::vector<uint16_t>> copies;
  std::vector<uint32_t> norms(64, 0);
  auto bind = [&](const kir::Kernel& k, std::map<std::string, std::vector<float>>& grads) {
    std::vector<void*> args;
    for (const kir::Buffer& b : k.buffers) {
      switch (b.source) {
        case kir::Source::Param:
          memory.try_emplace("p/" + b.path, cpu.values[b.path]);
          args.push_back(memory["p/" + b.path].data());
          break;
        case kir::Source::Gradient:
          args.push_back(grads[b.path].data());
          break;
        case kir::Source::OptimizerState:
          memory.try_emplace(b.path, std::vector<float>(static_cast<size_t>(b.shape.numel()), 0.0f));
          args.push_back(memory[b.path].data());
          break;
        case kir::Source::ParamCopy:
          copies.try_emplace(b.path, std::vector<uint16_t>(static_cast<size_t>(b.shape.numel()), 0));
          args.push_back(copies[b.path].data());
          break;
        default:
          EXPECT_EQ(b.source, kir::Source::Scratch) << b.name;
          args.push_back(norms.data());
      }
    }
    return args;
  };
  for (int64_t k = 1; k <= 2; ++k) {
    const double lr = 0.02 * k;
    std::map<std::string, std::vector<float>> grads;
    std::map<std::string, const float*> grad_ptrs;
    for (auto& [path, n] : sizes) {
      grads[path] = values(n, static_cast<uint32_t>(n * 3 + k), 2.0f);
      grad_ptrs[path] = grads[path].data();
    }
    auto first = bind(norm, grads);
    cu->launch("sxtest_opt_norm", {2}, {64}, simt::Order::forward, static_cast<void* const*>(first.data()));
    const double bc1 = 1 - std::pow(spec.beta1, static_cast<double>(k)), bc2 = 1 - std::pow(spec.beta2, double(k));
    std::vector<float> scalars = {static_cast<float>(spec.beta1),
                                  static_cast<float>(spec.beta2),
                                  static_cast<float>(1 - spec.beta1),
                                  static_cast<float>(1 - spec.beta2),
                                  static_cast<float>(std::sqrt(bc2)),
                                  static_cast<float>(spec.eps),
                                  static_cast<float>(-(lr / bc1)),
                                  static_cast<float>(1 - lr * spec.weight_decay),
                                  1.0f};
    ASSERT_EQ(update.scalars.size(), scalars.size());
    auto args = bind(update, grads);
    std::vector<uint64_t> words(scalars.size(), 0);  // the kernel's scalar words: an f32's bits in the low half
    for (size_t i = 0; i < scalars.size(); ++i) std::memcpy(&words[i], &scalars[i], 4);
    args.push_back(words.data());
    cu->launch("sxtest_opt_update", {2}, {64}, k == 1 ? simt::Order::forward : simt::Order::reverse,
               static_cast<void* const*>(args.data()));
    cpu_opt.step(cpu, grad_ptrs, k, lr, false);
    for (auto& [path, n] : sizes) {
      EXPECT_EQ(0, std::memcmp(memory["p/" + path].data(), cpu.values[path].data(), n * 4)) << path << " step " << k;
      EXPECT_EQ(copies[path], to_bf16(cpu.values[path])) << path;
    }
  }
}

}  // namespace
}  // namespace sx::cuda::test
