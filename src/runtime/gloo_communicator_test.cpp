// Several nodes on loopback, as threads of this process: the rendezvous
// store, the handshake, and Gloo's collectives (sizes, bf16, the rank-order
// sum, a lost node).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <future>
#include <random>
#include <thread>
#include <vector>

#include "runtime/communicator_test_util.h"
#include "runtime/node_meeting.h"
#include "util/error.h"

namespace sx {
namespace {

using namespace std::chrono_literals;

// A port nobody listens on now (the kernel's choice, released at once).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

NodeSetup setup_of(int rank, int nodes, int port, double timeout_s = 20) {
  NodeSetup s;
  s.rank = rank;
  s.nodes = nodes;
  s.rendezvous = {"127.0.0.1", port};
  s.timeout_s = timeout_s;
  return s;
}

NodeHello some_hello() {
  NodeHello h;
  h.slug = "my-run";
  h.graph = "abc123";
  h.knobs = {{"lr", "0.003"}, {"layers", "2"}};
  return h;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.diagnostics()[0].message;
  }
  return "";
}

// Runs body(rank, communicator) on `nodes` threads that meet first; an error
// of a rank is its message in the result.
std::vector<std::string> on_nodes(int nodes, const std::function<void(int, Communicator&)>& body,
                                  std::function<NodeHello(int)> hello_of = {}, double timeout_s = 20) {
  int port = free_port();
  std::vector<std::future<std::string>> done;
  for (int r = 0; r < nodes; ++r)
    done.push_back(std::async(std::launch::async, [=] {
      try {
        auto c = meet_nodes(setup_of(r, nodes, port, timeout_s), hello_of ? hello_of(r) : some_hello());
        body(r, *c);
        return std::string();
      } catch (const UserError& e) {
        return std::string(code_info(e.code()).name) + " " + e.diagnostics()[0].message;
      }
    }));
  std::vector<std::string> out;
  for (auto& f : done) out.push_back(f.get());
  return out;
}

TEST(RendezvousStore, SetsOnceGetsAndWaitsUntilADeadline) {
  int port = free_port();
  RendezvousServer server({"127.0.0.1", port});
  RendezvousClient a({"127.0.0.1", port}, Clock::now() + 5s), b({"127.0.0.1", port}, Clock::now() + 5s);
  EXPECT_TRUE(a.set("k", std::string("v\0w", 3)));
  EXPECT_FALSE(b.set("k", "other"));  // set once
  EXPECT_EQ(b.get("k"), std::string("v\0w", 3));
  EXPECT_EQ(b.get("missing"), std::nullopt);
  auto t0 = Clock::now();
  EXPECT_EQ(b.wait("missing", Clock::now() + 200ms), std::nullopt);
  EXPECT_GE(Clock::now() - t0, 200ms);
  std::thread later([&] {
    std::this_thread::sleep_for(100ms);
    a.set("late", std::string(100000, 'x'));
  });
  EXPECT_EQ(b.wait("late", Clock::now() + 10s)->size(), 100000u);
  later.join();
}

TEST(RendezvousStore, APortTakenIsRefusedAndNobodyListeningTimesOut) {
  int port = free_port();
  RendezvousServer first({"127.0.0.1", port});
  EXPECT_EQ(code_of([&] { RendezvousServer second({"127.0.0.1", port}); }), Code::NODE_006);
  int nobody = free_port();
  auto t0 = Clock::now();
  EXPECT_EQ(code_of([&] { RendezvousClient c({"127.0.0.1", nobody}, Clock::now() + 300ms); }), Code::NODE_003);
  EXPECT_LT(Clock::now() - t0, 5s);
}

TEST(NodeHello, DifferencesNameTheKnobAndBothValues) {
  nlohmann::ordered_json a = {{"protocol", 1},    {"version", "0.1.0"},         {"nodes", 2},    {"gradients", "f32"},
                              {"slug", "my-run"}, {"knobs", {{"lr", "0.003"}}}, {"graph", "g1"}, {"rank", 0}};
  auto b = a;
  b["rank"] = 1;
  EXPECT_TRUE(hello_differences(a, b).empty());
  b["knobs"]["lr"] = "0.001";
  b["graph"] = "g2";
  ASSERT_EQ(hello_differences(a, b).size(), 1u);
  EXPECT_EQ(hello_differences(a, b)[0], "knob lr is 0.001 on node 1 but 0.003 on node 0");
  b["knobs"]["lr"] = "0.003";
  EXPECT_EQ(hello_differences(a, b)[0], "the graph is g2 on node 1 but g1 on node 0");
  b["gradients"] = "bf16";
  EXPECT_EQ(hello_differences(a, b)[0], "SEXPGPU_NODE_GRADIENTS is bf16 on node 1 but f32 on node 0");
  b["gradients"] = "f32";
  a["device"] = "cpu", b["device"] = "cuda";  // a node's numbers are its device's
  EXPECT_EQ(hello_differences(a, b)[0], "the device is cuda on node 1 but cpu on node 0");
  a["device"] = "cuda", a["gpus"] = 2, b["gpus"] = 1;  // the GPUs are ranks of the gradient's sum
  EXPECT_EQ(hello_differences(a, b)[0], "the number of GPUs (SEXPGPU_DEVICES) is 1 on node 1 but 2 on node 0");
}

TEST(Bf16, HalvesRoundToNearestEven) {
  EXPECT_EQ(from_bf16_bits(to_bf16_bits(1.0f)), 1.0f);
  EXPECT_EQ(to_bf16_bits(1.0f + 1.0f / 256), to_bf16_bits(1.0f));  // a tie: to the even one
  EXPECT_EQ(from_bf16_bits(to_bf16_bits(1.0f + 3.0f / 256)), 1.0f + 4.0f / 256);
  EXPECT_TRUE(std::isnan(from_bf16_bits(to_bf16_bits(std::nanf("")))));
}

#if SEXPGPU_HAVE_GLOO

TEST(GlooCommunicator, GathersEverySizeInRankOrder) {
  auto errors = on_nodes(3, [](int r, Communicator& c) {
    EXPECT_EQ(c.rank(), r);
    EXPECT_EQ(c.size(), 3);
    for (size_t bytes : {size_t{0}, size_t{1}, size_t{7}, size_t{1} << 20}) {
      std::vector<char> mine(bytes, static_cast<char>('a' + r)), all(bytes * 3, '?');
      c.all_gather(mine.data(), bytes, all.data());
      for (int p = 0; p < 3; ++p)
        for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(all[static_cast<size_t>(p) * bytes + i], 'a' + p);
    }
    std::vector<int> v(5, r == 1 ? 42 : 0);
    c.broadcast(v.data(), v.size() * sizeof(int), 1);
    EXPECT_EQ(v, std::vector<int>(5, 42));
    c.barrier();
    EXPECT_EQ(c.first_nonzero(r == 0 ? 0 : 10 + r), 11);
  });
  for (const auto& e : errors) EXPECT_EQ(e, "");
}

// Terms whose sum depends on the order: only the rank-order sum gives these bits.
std::vector<float> terms_of(int r, size_t n) {
  std::mt19937 g(static_cast<unsigned>(r + 1));
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g) * (r == 1 ? 1e7f : 1.0f);
  return v;
}

TEST(GlooCommunicator, SumsInRankOrderWithTheSameBitsOnEveryRank) {
  const size_t n = 10000;
  for (GradientPrecision wire : {GradientPrecision::f32, GradientPrecision::bf16}) {
    std::vector<float> expected(n, 0.0f);
    for (int r = 0; r < 4; ++r) {
      auto t = terms_of(r, n);
      for (size_t i = 0; i < n; ++i)
        expected[i] += wire == GradientPrecision::bf16 ? from_bf16_bits(to_bf16_bits(t[i])) : t[i];
    }
    auto errors = on_nodes(4, [&](int r, Communicator& c) {
      auto v = terms_of(r, n);
      c.all_reduce_sum(v.data(), n, wire);
      EXPECT_EQ(std::memcmp(v.data(), expected.data(), n * sizeof(float)), 0) << "rank " << r;
    });
    for (const auto& e : errors) EXPECT_EQ(e, "");
  }
}

TEST(GlooCommunicator, AKnobMismatchIsRefusedOnEveryNode) {
  auto errors = on_nodes(
      3, [](int, Communicator&) { ADD_FAILURE() << "met despite the mismatch"; },
      [](int r) {
        NodeHello h = some_hello();
        if (r == 2) h.knobs[0].second = "0.001";
        return h;
      });
  for (const auto& e : errors)
    EXPECT_EQ(e, "E-NODE-002 the nodes disagree: knob lr is 0.001 on node 2 but 0.003 on node 0");
}

TEST(GlooCommunicator, ANodeThatNeverComesIsNamedWithinTheTimeout) {
  int port = free_port();
  auto t0 = Clock::now();
  std::string m = message_of([&] { meet_nodes(setup_of(0, 3, port, 1.0), some_hello()); });
  EXPECT_LT(Clock::now() - t0, 4s);
  EXPECT_EQ(m.rfind("nodes 1, 2 did not arrive at SEXPGPU_RENDEZVOUS 127.0.0.1:", 0), 0u) << m;
}

TEST(GlooCommunicator, ALostNodeIsNamedByTheOthers) {
  auto t0 = Clock::now();
  auto errors = on_nodes(
      3,
      [](int r, Communicator& c) {
        c.barrier();         // every connection made
        if (r == 1) return;  // then leaves without a word
        std::vector<float> v(100, 1.0f);
        c.all_reduce_sum(v.data(), v.size());
      },
      {}, 8.0);
  EXPECT_LT(Clock::now() - t0, 20s);
  EXPECT_EQ(errors[1], "");
  for (int r : {0, 2})
    EXPECT_EQ(errors[static_cast<size_t>(r)].rfind("E-NODE-004 node " + std::to_string(r) + " lost node 1:", 0), 0u)
        << errors[static_cast<size_t>(r)];
}

#endif

}  // namespace
}  // namespace sx
