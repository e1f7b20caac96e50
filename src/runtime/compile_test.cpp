#include "runtime/compile.h"

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

Environment no_environment() {
  return parse_environment([](const char*) -> char* { return nullptr; });
}

TEST(Compile, SignalDuringCompilationInterrupts) {
  std::atomic<bool> stop{true};
  EXPECT_THROW(compile(example("curriculum.sx"), Selection{}, no_environment(), &stop), Interrupted);
}

// A signal that lands while the run loop evaluates a stage's :when must not
// throw out of the loop (it is answered at the next step boundary): after
// compilation the evaluator no longer watches the stop flag.
TEST(Compile, RunLoopEvaluationIgnoresTheStopFlag) {
  std::atomic<bool> stop{false};
  Compiled c = compile(example("curriculum.sx"), Selection{}, no_environment(), &stop);
  ASSERT_FALSE(c.x->curriculum.empty());
  EXPECT_EQ(c.interp->stop_flag, nullptr);
}

}  // namespace
}  // namespace sx
