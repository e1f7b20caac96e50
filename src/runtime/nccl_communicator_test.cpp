// The NCCL communicator over a fake NCCL and fake GPUs in host memory (no
// GPU here): ncclCommInitAll over the ordinals, the staging of host bytes,
// the rank-order sum on every rank, broadcast, and the watchdog when a rank
// never comes.
#include "runtime/nccl_communicator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/inprocess_communicator.h"
#include "runtime/nccl_gpu.h"
#include "util/error.h"

namespace sx {
namespace {

using Clock = std::chrono::steady_clock;

// The fake NCCL: a collective completes when every rank has queued it.
struct Clique {
  std::mutex mutex;
  int ranks = 0;
  struct Posted {
    const void* send = nullptr;
    void* recv = nullptr;
    size_t bytes = 0;
    int root = -1;  // -1: an all-gather
  };
  std::vector<Posted> posted;
  std::vector<int> queued, completed;  // per rank: collectives queued, completed
  std::vector<int> devlist;
  std::atomic<int> aborted{0}, destroyed{0};
  bool fail_init = false;

  void reset(int n) {
    std::lock_guard<std::mutex> l(mutex);
    ranks = n;
    posted.assign(static_cast<size_t>(n), {});
    queued.assign(static_cast<size_t>(n), 0);
    completed.assign(static_cast<size_t>(n), 0);
    aborted = destroyed = 0;
    fail_init = false;
  }
  void post(int r, Posted p) {
    std::lock_guard<std::mutex> l(mutex);
    posted[static_cast<size_t>(r)] = p;
    ++queued[static_cast<size_t>(r)];
    for (int q = 0; q < ranks; ++q)
      if (queued[static_cast<size_t>(q)] != queued[0] || queued[0] == completed[0]) return;
    for (int q = 0; q < ranks; ++q) {
      Posted& me = posted[static_cast<size_t>(q)];
      if (me.root < 0)
        for (int s = 0; s < ranks; ++s)
          std::memcpy(static_cast<char*>(me.recv) + static_cast<size_t>(s) * me.bytes,
                      posted[static_cast<size_t>(s)].send, me.bytes);
      else if (q != me.root)
        std::memcpy(me.recv, posted[static_cast<size_t>(me.root)].send, me.bytes);
    }
    for (int q = 0; q < ranks; ++q) completed[static_cast<size_t>(q)] = queued[static_cast<size_t>(q)];
  }
  bool done(int r) {
    std::lock_guard<std::mutex> l(mutex);
    return completed[static_cast<size_t>(r)] == queued[static_cast<size_t>(r)];
  }
} g_clique;

nccl::Comm comm_of(int r) { return reinterpret_cast<nccl::Comm>(static_cast<uintptr_t>(r + 1)); }
int rank_of(nccl::Comm c) { return static_cast<int>(reinterpret_cast<uintptr_t>(c)) - 1; }

nccl::Api fake_nccl() {
  nccl::Api a{};
  a.get_error_string = [](nccl::Result) { return "invalid usage"; };
  a.get_last_error = [](nccl::Comm) { return ""; };
  a.comm_init_all = [](nccl::Comm* comms, int n, const int* devlist) {
    if (g_clique.fail_init) return 5;  // ncclInvalidUsage
    g_clique.devlist.assign(devlist, devlist + n);
    for (int r = 0; r < n; ++r) comms[r] = comm_of(r);
    return nccl::kSuccess;
  };
  a.comm_destroy = [](nccl::Comm) {
    ++g_clique.destroyed;
    return nccl::kSuccess;
  };
  a.comm_abort = [](nccl::Comm) {
    ++g_clique.aborted;
    return nccl::kSuccess;
  };
  a.comm_get_async_error = [](nccl::Comm, nccl::Result* r) {
    *r = nccl::kSuccess;
    return nccl::kSuccess;
  };
  a.all_gather = [](const void* send, void* recv, size_t count, nccl::DataType type, nccl::Comm c, nccl::Stream) {
    EXPECT_EQ(type, nccl::kUint8);
    g_clique.post(rank_of(c), {send, recv, count, -1});
    return nccl::kSuccess;
  };
  a.broadcast = [](const void* send, void* recv, size_t count, nccl::DataType, int root, nccl::Comm c, nccl::Stream) {
    g_clique.post(rank_of(c), {send, recv, count, root});
    return nccl::kSuccess;
  };
  return a;
}

// The fake GPU current on this thread (NCCL's init takes the current device).
thread_local int t_current_gpu = -1;

// A GPU in host memory whose copies back to the host happen once its collective has.
class FakeGpu final : public NcclDevice {
 public:
  explicit FakeGpu(int rank) : rank_(rank) {}
  void* buffer(size_t bytes, int which) override {
    auto& b = buffers_[which];
    if (b.size() < bytes) b.resize(bytes);
    return b.data();
  }
  void to_device(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void to_host(void* dst, const void* src, size_t bytes) override { pending_ = {dst, src, bytes}; }
  nccl::Stream stream() override { return nullptr; }
  bool idle() override {
    if (!g_clique.done(rank_)) return false;
    if (pending_.bytes) std::memcpy(pending_.dst, pending_.src, pending_.bytes);
    pending_ = {};
    return true;
  }
  void make_current() override { t_current_gpu = rank_; }

 private:
  int rank_;
  std::vector<char> buffers_[2];
  struct {
    void* dst = nullptr;
    const void* src = nullptr;
    size_t bytes = 0;
  } pending_;
};

uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

TEST(NcclCommunicator, RanksSumInRankOrderAndBroadcastThroughTheirGpus) {
  const nccl::Api api = fake_nccl();
  g_clique.reset(3);
  std::vector<FakeGpu> gpus{FakeGpu(0), FakeGpu(1), FakeGpu(2)};
  std::vector<NcclDevice*> devices{&gpus[0], &gpus[1], &gpus[2]};
  {
    auto comms = make_nccl_communicators(api, {2, 0, 1}, devices, 30);
    EXPECT_EQ(g_clique.devlist, (std::vector<int>{2, 0, 1}));
    const float terms[3][2] = {{1e8f, 0.5f}, {1.0f, 0.25f}, {-1e8f, 0.125f}};
    std::vector<std::future<void>> ranks;
    for (int r = 0; r < 3; ++r)
      ranks.push_back(std::async(std::launch::async, [&, r] {
        Communicator& c = *comms[static_cast<size_t>(r)];
        EXPECT_EQ(c.rank(), r);
        EXPECT_EQ(c.size(), 3);
        for (int round = 0; round < 50; ++round) {
          float v[2] = {terms[r][0], terms[r][1]};
          c.all_reduce_sum(v, 2);
          EXPECT_EQ(bits(v[0]), bits(0.0f));  // (1e8 + 1) - 1e8 in rank order
          EXPECT_EQ(v[1], 0.875f);
          int64_t word = r == 1 ? round : -7;
          c.broadcast(&word, sizeof word, 1);
          EXPECT_EQ(word, round);
          c.barrier();
        }
      }));
    for (auto& f : ranks) f.get();
  }
  EXPECT_EQ(g_clique.destroyed, 3);
  EXPECT_EQ(g_clique.aborted, 0);
}

// The same over the CUDA device's GPUs (nccl_gpu.h) — emulated ones, whose
// calls happen when they are made, so this NCCL's collectives return only
// once every rank has posted (a GPU's stream would order the copy back after
// the collective): the staging, the copies and the completion query.
TEST(NcclCommunicator, OverTheCudaDevicesGpusRanksSumInRankOrder) {
  nccl::Api api = fake_nccl();
  api.all_gather = [](const void* send, void* recv, size_t count, nccl::DataType, nccl::Comm c, nccl::Stream) {
    g_clique.post(rank_of(c), {send, recv, count, -1});
    while (!g_clique.done(rank_of(c))) std::this_thread::yield();
    return nccl::kSuccess;
  };
  g_clique.reset(3);
  std::vector<std::unique_ptr<cuda::Gpu>> gpus;
  std::vector<std::unique_ptr<NcclDevice>> on;
  std::vector<NcclDevice*> devices;
  for (int r = 0; r < 3; ++r) {
    gpus.push_back(cuda::make_emulated_gpu(int64_t{1} << 24));
    on.push_back(nccl_device_on(*gpus.back()));
    devices.push_back(on.back().get());
  }
  {
    auto comms = make_nccl_communicators(api, {0, 1, 2}, devices, 30);
    const float terms[3][2] = {{1e8f, 0.5f}, {1.0f, 0.25f}, {-1e8f, 0.125f}};
    std::vector<std::future<void>> ranks;
    for (int r = 0; r < 3; ++r)
      ranks.push_back(std::async(std::launch::async, [&, r] {
        for (int round = 0; round < 20; ++round) {
          std::vector<float> v(1000 + 100 * round, terms[r][1]);  // the staging grows
          v[0] = terms[r][0];
          comms[static_cast<size_t>(r)]->all_reduce_sum(v.data(), v.size());
          EXPECT_EQ(bits(v[0]), bits(0.0f));
          EXPECT_EQ(v.back(), 0.875f);
        }
      }));
    for (auto& f : ranks) f.get();
  }
  EXPECT_EQ(g_clique.destroyed, 3);
}

// GPU nodes: node 0's unique id reaches every node through the nodes' own
// communicator, each node joins with its rank, and the exchange sums in rank
// order; an init that never finishes (a node that never joins) is E-NODE-011
// at the timeout.
std::atomic<bool> g_release_init{false};
nccl::UniqueId g_ids[3];
TEST(NcclCommunicator, NodesBootstrapThroughTheirCommunicatorAndSumInRankOrder) {
  nccl::Api api = fake_nccl();
  api.get_unique_id = [](nccl::UniqueId* id) {
    for (size_t i = 0; i < sizeof id->internal; ++i) id->internal[i] = static_cast<char>(i * 7 + 1);
    return nccl::kSuccess;
  };
  api.comm_init_rank = [](nccl::Comm* comm, int n, nccl::UniqueId id, int rank) {
    EXPECT_EQ(n, 3);
    EXPECT_EQ(t_current_gpu, rank);
    g_ids[rank] = id;
    *comm = comm_of(rank);
    return nccl::kSuccess;
  };
  g_clique.reset(3);
  auto nodes = make_inprocess_communicators(3, 30);
  std::vector<FakeGpu> gpus{FakeGpu(0), FakeGpu(1), FakeGpu(2)};
  std::vector<std::future<void>> ranks;
  for (int r = 0; r < 3; ++r)
    ranks.push_back(std::async(std::launch::async, [&, r] {
      auto cs = make_nccl_node_communicators(api, *nodes[static_cast<size_t>(r)], {&gpus[static_cast<size_t>(r)]}, 30);
      ASSERT_EQ(cs.size(), 1u);
      Communicator* c = cs[0].get();
      EXPECT_EQ(c->rank(), r);
      float v[2] = {r == 0 ? 1e8f : r == 1 ? 1.0f : -1e8f, 0.25f};
      c->all_reduce_sum(v, 2);
      EXPECT_EQ(bits(v[0]), bits(0.0f));
      EXPECT_EQ(v[1], 0.75f);
    }));
  for (auto& f : ranks) f.get();
  for (int r = 0; r < 3; ++r) EXPECT_EQ(std::memcmp(&g_ids[r], &g_ids[0], sizeof g_ids[0]), 0) << r;
  EXPECT_EQ(g_ids[0].internal[1], 8);

  api.comm_init_rank = [](nccl::Comm*, int, nccl::UniqueId, int) {
    while (!g_release_init) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return nccl::kInternalError;
  };
  auto alone = make_inprocess_communicators(1, 30);
  const auto start = Clock::now();
  try {
    make_nccl_node_communicators(api, *alone[0], {&gpus[0]}, 0.2);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), Code::NODE_011);
    EXPECT_NE(std::string(e.what()).find("ncclCommInitRank of node 0 of 1 did not finish within"), std::string::npos)
        << e.what();
  }
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  g_release_init = true;  // the abandoned init ends
}

// Nodes of two GPUs: GPU g of node n is rank 2n + g of one communicator of 4,
// each GPU's init with its GPU current, and the sum in that rank order (1,
// where summing each node's GPUs first would give 0).
TEST(NcclCommunicator, NodesOfTwoGpusAreRanksOfOneCommunicatorInNodeThenGpuOrder) {
  nccl::Api api = fake_nccl();
  api.get_unique_id = [](nccl::UniqueId* id) {
    std::memset(id->internal, 9, sizeof id->internal);
    return nccl::kSuccess;
  };
  api.comm_init_rank = [](nccl::Comm* comm, int n, nccl::UniqueId id, int rank) {
    EXPECT_EQ(n, 4);
    EXPECT_EQ(t_current_gpu, rank);
    EXPECT_EQ(id.internal[5], 9);
    *comm = comm_of(rank);
    return nccl::kSuccess;
  };
  g_clique.reset(4);
  auto nodes = make_inprocess_communicators(2, 30);
  std::vector<FakeGpu> gpus{FakeGpu(0), FakeGpu(1), FakeGpu(2), FakeGpu(3)};
  std::vector<std::unique_ptr<Communicator>> comms[2];
  std::vector<std::future<void>> made;
  for (int n = 0; n < 2; ++n)
    made.push_back(std::async(std::launch::async, [&, n] {
      comms[n] =
          make_nccl_node_communicators(api, *nodes[static_cast<size_t>(n)],
                                       {&gpus[static_cast<size_t>(2 * n)], &gpus[static_cast<size_t>(2 * n + 1)]}, 30);
    }));
  for (auto& f : made) f.get();
  const float terms[4] = {1e8f, 1.0f, -1e8f, 1.0f};
  std::vector<std::future<void>> ranks;
  for (int n = 0; n < 2; ++n)
    for (int g = 0; g < 2; ++g)
      ranks.push_back(std::async(std::launch::async, [&, n, g] {
        Communicator& c = *comms[n][static_cast<size_t>(g)];
        EXPECT_EQ(c.rank(), 2 * n + g);
        EXPECT_EQ(c.size(), 4);
        float v = terms[2 * n + g];
        c.all_reduce_sum(&v, 1);
        EXPECT_EQ(bits(v), bits(1.0f));
      }));
  for (auto& f : ranks) f.get();

  // A GPU of a node whose init never ends is named by its rank, within the timeout.
  api.comm_init_rank = [](nccl::Comm* comm, int, nccl::UniqueId, int rank) {
    if (rank == 1)
      while (!g_release_init) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    *comm = comm_of(rank);
    return nccl::kSuccess;
  };
  g_release_init = false;
  auto alone = make_inprocess_communicators(1, 30);
  try {
    make_nccl_node_communicators(api, *alone[0], {&gpus[0], &gpus[1]}, 0.2);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), Code::NODE_011);
    EXPECT_NE(std::string(e.what()).find("ncclCommInitRank of GPU rank 1 of 2 (node 0, GPU 1) did not finish within"),
              std::string::npos)
        << e.what();
  }
  g_release_init = true;
}

TEST(NcclCommunicator, AFailedInitIsENode011NamingTheDevices) {
  const nccl::Api api = fake_nccl();
  g_clique.reset(2);
  g_clique.fail_init = true;
  FakeGpu a(0), b(1);
  try {
    make_nccl_communicators(api, {0, 1}, {&a, &b}, 30);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), Code::NODE_011);
    EXPECT_NE(std::string(e.what()).find("ncclCommInitAll over CUDA devices 0,1 failed: invalid usage"),
              std::string::npos)
        << e.what();
  }
}

TEST(NcclCommunicator, ARankThatNeverComesStopsTheOthersAtTheTimeoutWithTheirCommunicatorsAborted) {
  const nccl::Api api = fake_nccl();
  g_clique.reset(3);
  std::vector<FakeGpu> gpus{FakeGpu(0), FakeGpu(1), FakeGpu(2)};
  auto comms = make_nccl_communicators(api, {0, 1, 2}, {&gpus[0], &gpus[1], &gpus[2]}, 0.3);
  const auto start = Clock::now();
  std::vector<std::future<Code>> waiting;
  for (int r = 0; r < 2; ++r)  // rank 2 never joins
    waiting.push_back(std::async(std::launch::async, [&, r] {
      float x = 1.0f;
      try {
        comms[static_cast<size_t>(r)]->all_reduce_sum(&x, 1);
      } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("did not finish within SEXPGPU_NODE_TIMEOUT (0.3 s)"), std::string::npos)
            << e.what();
        return e.code();
      }
      return Code::NODE_001;
    }));
  for (auto& w : waiting) {
    ASSERT_EQ(w.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "a hang";
    EXPECT_EQ(w.get(), Code::NODE_011);
  }
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_GE(took, 0.29);
  EXPECT_LT(took, 10.0);
  EXPECT_EQ(g_clique.aborted, 2);
}

}  // namespace
}  // namespace sx
