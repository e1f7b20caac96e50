// No allocation inside a step: operator new is replaced for this test binary
// and counts while a step runs. (OpenBLAS allocates its buffers with its own
// allocator at first use, in the warm-up steps.)
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "autodiff/autodiff.h"
#include "testing/gpt_graph.h"
#include "backend/cpu/test_util.h"

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
// The nothrow forms too (std::stable_sort's buffer), or ASan sees its new freed by our delete.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace sx::cpu::testing {
namespace {

TEST(CpuAlloc, SteadyStateStepsDoNotAllocate) {
  Case c;
  c.g.builtin_taps = false;
  GptShape shape{.batch = 2, .seq = 32, .vocab = 50, .d = 32, .heads = 4, .layers = 2};
  GptGraph m = build_gpt(c.g, shape);
  NodeId d = ops::dropout(c.g, m.loss, 0.1, 1, 1);  // Philox in the step too
  Gradients grads = backward(c.g, m.loss);
  std::vector<NodeId> outs{m.loss, d};
  for (const auto& [path, id] : grads.params) outs.push_back(id);
  std::vector<int32_t> tokens(shape.batch * shape.seq, 3);
  c.fill_params();
  Feeds feeds = c.cpu_feeds();
  feeds.inputs["tokens"] = tokens.data();
  feeds.inputs["targets"] = tokens.data();
  plan::Plan p = plan::make_plan(c.g, outs);
  CpuExecutor ex(c.g, p, 3);
  for (int i = 0; i < 2; ++i) ex.run(feeds);
  counting = true;
  for (uint64_t step = 0; step < 5; ++step) {
    feeds.rng_offset = step;
    ex.run(feeds);
    ex.run(step);
  }
  counting = false;
  EXPECT_EQ(allocations.load(), 0);
  counting = true;                            // the hook itself works
  void* volatile probe = ::operator new(16);  // a call, not a new-expression the compiler may elide
  ::operator delete(probe);
  counting = false;
  EXPECT_EQ(allocations.load(), 1);
  EXPECT_TRUE(std::isfinite(ex.f32(m.loss)[0]));
}

}  // namespace
}  // namespace sx::cpu::testing
