// Golden generated sources (tinygrad's "process replay", kept in the repo):
// the CUDA text of every kernel of a small gpt step, f32 and bf16, with its
// optimizer kernels, compared with tests/golden_kernels/*.cu. A change of
// the lowering, the kernel IR or the printer that changes any kernel shows
// here as a diff to review; tests/golden_kernels/update.sh rewrites them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "backend/cuda/codegen/print_cuda.h"
#include "codegen_gpt_step.h"

namespace sx::cuda::test {
namespace {

std::string gpt_sources(bool bf16) {
  auto s = gpt_step(bf16, {.batch = 2, .seq = 8, .vocab = 32, .d = 16, .heads = 2, .layers = 2});
  std::vector<const kir::Kernel*> kernels;
  for (const auto& k : s->kernels) kernels.push_back(&k);
  kir::OptimizerParams o;
  for (const auto& [path, id] : s->g.params()) o.tensors.push_back({path, s->g.node(id).shape.numel(), true});
  o.clip = 1.0;
  o.bf16_copies = bf16;
  kir::Kernel norm = kir::build_optimizer(o, kir::Optimizer::Stage::GradNorm, "optimizer_grad_norm");
  kir::Kernel update = kir::build_optimizer(o, kir::Optimizer::Stage::Update, "optimizer_adamw");
  kernels.push_back(&norm);
  kernels.push_back(&update);
  std::string out;
  for (const codegen::ProgramText& p : codegen::print_programs(kernels)) out += p.source;
  return out;
}

class GoldenKernels : public ::testing::TestWithParam<bool> {};

TEST_P(GoldenKernels, SmallGptSourcesAreUnchanged) {
  const bool bf16 = GetParam();
  std::string path = std::string(SEXPGPU_GOLDEN_KERNELS_DIR) + (bf16 ? "/gpt_bf16.cu" : "/gpt_f32.cu");
  std::string now = gpt_sources(bf16);
  EXPECT_EQ(now, gpt_sources(bf16)) << "the printer is not deterministic";
  if (const char* update = std::getenv("SEXPGPU_UPDATE_GOLDEN_KERNELS"); update && std::string(update) == "1") {
    std::ofstream(path) << now;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "no " << path << ": run tests/golden_kernels/update.sh";
  std::stringstream want;
  want << in.rdbuf();
  if (want.str() == now) return;
  // The first differing line, for the message; the whole diff with update.sh and git diff.
  std::istringstream a(want.str()), b(now);
  std::string la, lb;
  int line = 1;
  while (std::getline(a, la) && std::getline(b, lb) && la == lb) ++line;
  ADD_FAILURE() << path << " differs from the generated source at line " << line << ":\n  golden: " << la
                << "\n  now:    " << lb
                << "\nIf the change is intended, run tests/golden_kernels/update.sh and review `git diff`.";
}

INSTANTIATE_TEST_SUITE_P(Precisions, GoldenKernels, ::testing::Values(false, true),
                         [](const auto& info) { return std::string(info.param ? "bf16" : "f32"); });

}  // namespace
}  // namespace sx::cuda::test
