// Nodes of several GPUs' communicator (node_group_communicator.h): 2 nodes of
// 2 GPUs as threads of this process, the nodes meeting in memory too (as
// Gloo would between processes): the ranks in node-then-GPU order, gathers,
// broadcasts from every rank, the rank-order sum over every GPU of every
// node (bits that summing each node first would not give), bf16, and a GPU
// that gives up.
#include "runtime/node_group_communicator.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <thread>
#include <vector>

#include "runtime/communicator_test_util.h"
#include "runtime/inprocess_communicator.h"
#include "util/error.h"

namespace sx {
namespace {

using Clock = std::chrono::steady_clock;

// 2 nodes of 2 GPUs: the communicators of ranks 0 ... 3, and the nodes' own.
struct TwoNodesOfTwo {
  explicit TwoNodesOfTwo(double timeout_s = 30) : nodes(make_inprocess_communicators(2, timeout_s)) {
    for (size_t n = 0; n < 2; ++n)
      for (auto& c : make_node_group_communicators(make_inprocess_communicators(2, timeout_s), *nodes[n]))
        ranks.push_back(std::move(c));
  }
  // Runs `body(rank, comm)` on one thread per rank; returns when all have.
  void on_every_rank(const std::function<void(int, Communicator&)>& body) {
    std::vector<std::future<void>> done;
    for (size_t r = 0; r < ranks.size(); ++r)
      done.push_back(std::async(std::launch::async, [&, r] { body(static_cast<int>(r), *ranks[r]); }));
    for (auto& f : done) f.get();
  }
  std::vector<std::unique_ptr<Communicator>> nodes, ranks;
};

uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

TEST(NodeGroupCommunicator, RanksAreNodeThenGpuAndGatherAndBroadcastInThatOrder) {
  TwoNodesOfTwo g;
  g.on_every_rank([](int r, Communicator& c) {
    EXPECT_EQ(c.rank(), r);
    EXPECT_EQ(c.size(), 4);
    EXPECT_EQ(c.leads(), r == 0);
    for (int round = 0; round < 3; ++round) {  // collectives one after another
      const int32_t mine[2] = {r * 10 + round, -r};
      int32_t all[8] = {};
      c.all_gather(mine, sizeof mine, all);
      for (int q = 0; q < 4; ++q) {
        EXPECT_EQ(all[2 * q], q * 10 + round) << r;
        EXPECT_EQ(all[2 * q + 1], -q) << r;
      }
    }
    for (int root = 0; root < 4; ++root) {
      int64_t v = c.rank() == root ? 100 + root : -1;
      c.broadcast(&v, sizeof v, root);
      EXPECT_EQ(v, 100 + root) << "rank " << r << " root " << root;
    }
    c.barrier();
  });
}

TEST(NodeGroupCommunicator, SumsOverEveryGpuOfEveryNodeInRankOrder) {
  TwoNodesOfTwo g;
  // In rank order ((1e8 + 1) - 1e8) + 1 is 1; each node's GPUs first, (1e8 + 1) + (-1e8 + 1), is 0.
  const float terms[4] = {1e8f, 1.0f, -1e8f, 1.0f};
  const float fine[4] = {1.0f + 1.0f / 128, 3.0f, 0.5f + 1.0f / 512, 0.0f};
  g.on_every_rank([&](int r, Communicator& c) {
    float v[2] = {terms[r], fine[r]};
    c.all_reduce_sum(v, 2);
    EXPECT_EQ(bits(v[0]), bits(1.0f)) << r;
    EXPECT_EQ(v[1], fine[0] + fine[1] + fine[2] + fine[3]) << r;
    float h[2] = {terms[r], fine[r]};
    c.all_reduce_sum(h, 2, GradientPrecision::bf16);
    float want = 0;
    for (float x : fine) want += from_bf16_bits(to_bf16_bits(x));
    EXPECT_EQ(h[1], want) << r;
    EXPECT_NE(h[1], v[1]) << "bf16 terms gave f32's sum";
  });
}

TEST(NodeGroupCommunicator, AGpuThatGivesUpStopsItsNodeAtOnceAndTheOtherNodeWithinTheTimeout) {
  TwoNodesOfTwo g(1.0);
  const auto start = Clock::now();
  std::vector<std::future<std::pair<Code, double>>> waiting;
  for (int r = 0; r < 3; ++r)
    waiting.push_back(std::async(std::launch::async, [&, r] {
      float x = 1.0f;
      Code code = code_of([&] { g.ranks[static_cast<size_t>(r)]->all_reduce_sum(&x, 1); });
      return std::make_pair(code, std::chrono::duration<double>(Clock::now() - start).count());
    }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  g.ranks[3]->abandon(std::make_exception_ptr(UserError(Code::DEV_040, {}, "out of device memory on rank 3")));
  for (int r = 0; r < 3; ++r) {
    auto& w = waiting[static_cast<size_t>(r)];
    ASSERT_EQ(w.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "a hang";
    auto [code, seconds] = w.get();
    if (r == 2) {  // the same node: its error, at once
      EXPECT_EQ(code, Code::DEV_040);
      EXPECT_LT(seconds, 0.9);
    } else {  // the other node: its partner never comes
      EXPECT_EQ(code, Code::NODE_011) << r;
      EXPECT_LT(seconds, 10.0);
    }
  }
}

}  // namespace
}  // namespace sx
