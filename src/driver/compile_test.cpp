#include "driver/compile.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>

namespace sx {
namespace {

std::string example(const char* name) {
  const char* root = std::getenv("SEXPGPU_SOURCE_DIR");
  return std::string(root ? root : SEXPGPU_SOURCE_DIR_DEFAULT) + "/examples/" + name;
}

TEST(Compile, SignalDuringCompilationInterrupts) {
  std::atomic<bool> stop{true};
  EXPECT_THROW(compile(example("curriculum.sx"), Selection{}, compile_options(Environment{}, &stop)), Interrupted);
}

// A signal that lands while the run loop evaluates a stage's :when must not
// throw out of the loop (it is answered at the next step boundary): after
// compilation the evaluator no longer watches the stop flag.
TEST(Compile, RunLoopEvaluationIgnoresTheStopFlag) {
  std::atomic<bool> stop{false};
  Compiled c = compile(example("curriculum.sx"), Selection{}, compile_options(Environment{}, &stop));
  ASSERT_FALSE(c.x->curriculum.empty());
  EXPECT_EQ(c.interp->stop_flag, nullptr);
}

// The driver takes the settings it needs and nothing else: the work budget
// and the memory a step must fit in reach the evaluator and the memory check.
TEST(Compile, TakesTheWorkBudgetAndTheMemoryFromItsOptions) {
  CompileOptions tiny_budget = compile_options(Environment{}, nullptr);
  tiny_budget.eval_limit = 10;
  try {
    compile(example("my-run.sx"), Selection{}, tiny_budget);
    ADD_FAILURE() << "a budget of 10 forms compiled my-run.sx";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), Code::EVAL_041);
  }
  CompileOptions tiny_memory = compile_options(Environment{}, nullptr);
  tiny_memory.memory_gib = 1e-6;
  try {
    compile(example("my-run.sx"), Selection{}, tiny_memory);
    ADD_FAILURE() << "my-run.sx fit in 1 KiB";
  } catch (const UserError& e) {
    // Refused as a tensor larger than the memory (E-SHAPE-030) or a step that does not fit (E-SHAPE-031).
    EXPECT_TRUE(e.code() == Code::SHAPE_030 || e.code() == Code::SHAPE_031) << e.what();
  }
  Compiled c = compile(example("my-run.sx"), Selection{}, compile_options(Environment{}, nullptr));
  EXPECT_GT(c.param_count(), 0);
  EXPECT_EQ(c.graph_hash.size(), 16u);
  EXPECT_EQ(c.graph_hash, c.graph_hashes.at(c.x->run->precision));
}

}  // namespace
}  // namespace sx
