#include "plan/pack.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "util/interrupted.h"

namespace sx::plan {
namespace {

std::vector<Buffer> random_buffers(std::mt19937& rng, int n, int positions, bool empty_ones) {
  std::vector<Buffer> b(n);
  const int64_t sizes[] = {64, 128, 192, 256, 1024, 4096};
  for (auto& x : b) {
    x.first = static_cast<int32_t>(rng() % positions);
    x.last = x.first + static_cast<int32_t>(rng() % (rng() % 4 == 0 ? positions : 8));
    x.bytes = empty_ones && rng() % 10 == 0 ? 0 : sizes[rng() % 6] * static_cast<int64_t>(1 + rng() % 3);
  }
  return b;
}

TEST(Pack, SameOffsetsAsTheDirectPlacement) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    auto b = random_buffers(rng, 1 + static_cast<int>(rng() % 200), 1 + static_cast<int>(rng() % 100), round % 5 == 0);
    std::vector<int64_t> fast, direct;
    int64_t arena = pack_buffers(b, fast);
    EXPECT_EQ(arena, pack_buffers_reference(b, direct)) << "round " << round;
    ASSERT_EQ(fast, direct) << "round " << round;
  }
}

// The activations a training step keeps for its backward pass all live across
// the middle of the schedule; the direct placement compares each buffer with
// every one of them (quadratic), the tree does not.
TEST(Pack, ManyLongLivedBuffersPackQuickly) {
  const int layers = 20000;
  std::vector<Buffer> b;
  for (int i = 0; i < layers; ++i) {
    int32_t fwd = 3 * i, bwd = 6 * layers - 3 * i;
    b.push_back({4096, fwd, bwd});      // kept for the backward
    b.push_back({1024, fwd, fwd + 1});  // a temporary of the forward
    b.push_back({1024, bwd - 1, bwd});  // a temporary of the backward
  }
  std::vector<int64_t> offsets;
  auto start = std::chrono::steady_clock::now();
  int64_t arena = pack_buffers(b, offsets);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(arena, int64_t{4096} * layers + 1024);  // the temporaries sit above the kept ones alive with them
  EXPECT_LT(s, 20.0) << "packing " << b.size() << " buffers took " << s << " s";
}

// A stopping signal during a long compile: the packer polls its flag.
TEST(Pack, StopFlagInterruptsPacking) {
  std::vector<Buffer> b(1000, Buffer{64, 0, 1});
  std::vector<int64_t> offsets;
  std::atomic<bool> stop{true};
  EXPECT_THROW(pack_buffers(b, offsets, &stop), Interrupted);
  stop = false;
  EXPECT_EQ(pack_buffers(b, offsets, &stop), 64 * 1000);
}

}  // namespace
}  // namespace sx::plan
