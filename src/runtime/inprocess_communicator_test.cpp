// Several GPUs' communicator, ranks as threads of this process: sizes, bf16,
// the rank-order sum, many collectives in a row, and the watchdog (a rank
// that never comes, a rank that gives up).
#include "runtime/inprocess_communicator.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <random>
#include <thread>
#include <vector>

#include "runtime/communicator_test_util.h"
#include "util/error.h"

namespace sx {
namespace {

using Clock = std::chrono::steady_clock;

// Runs `body(rank, comm)` on one thread per rank; returns when all have.
void on_every_rank(std::vector<std::unique_ptr<Communicator>>& comms,
                   const std::function<void(int, Communicator&)>& body) {
  std::vector<std::future<void>> done;
  for (size_t r = 0; r < comms.size(); ++r)
    done.push_back(std::async(std::launch::async, [&, r] { body(static_cast<int>(r), *comms[r]); }));
  for (auto& f : done) f.get();
}

uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

std::vector<float> values_of(int rank, size_t n) {
  std::mt19937 gen(1234 + static_cast<unsigned>(rank));
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen) * (rank % 2 ? 1e4f : 1e-3f);  // magnitudes where the order shows
  return v;
}

TEST(InProcessCommunicator, AllReduceIsTheRankOrderSumOnEveryRankForEverySize) {
  for (int ranks : {1, 2, 3, 4})
    for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}, size_t{100003}}) {
      auto comms = make_inprocess_communicators(ranks, 30);
      std::vector<std::vector<float>> got(static_cast<size_t>(ranks));
      on_every_rank(comms, [&](int r, Communicator& c) {
        EXPECT_EQ(c.rank(), r);
        EXPECT_EQ(c.size(), ranks);
        std::vector<float> v = values_of(r, n);
        c.all_reduce_sum(v.data(), n);
        got[static_cast<size_t>(r)] = v;
      });
      std::vector<std::vector<float>> terms;
      for (int r = 0; r < ranks; ++r) terms.push_back(values_of(r, n));
      for (size_t i = 0; i < n; ++i) {
        float want = 0.0f;
        for (int r = 0; r < ranks; ++r) want += terms[static_cast<size_t>(r)][i];
        for (int r = 0; r < ranks; ++r)
          ASSERT_EQ(bits(got[static_cast<size_t>(r)][i]), bits(want)) << ranks << " ranks, size " << n << " at " << i;
      }
    }
}

TEST(InProcessCommunicator, TheOrderIsRankOrderNotAnyOther) {
  // 1e8 + 1 - 1e8 is 0 in f32 when added in rank order, 1 in another order.
  const float terms[] = {1e8f, 1.0f, -1e8f};
  auto comms = make_inprocess_communicators(3, 30);
  std::vector<float> got(3);
  on_every_rank(comms, [&](int r, Communicator& c) {
    float x = terms[r];
    c.all_reduce_sum(&x, 1);
    got[static_cast<size_t>(r)] = x;
  });
  for (float x : got) EXPECT_EQ(x, 0.0f);
}

TEST(InProcessCommunicator, Bf16CrossesRoundedOnEveryRankItsOwnToo) {
  const size_t n = 513;
  auto comms = make_inprocess_communicators(3, 30);
  std::vector<std::vector<float>> got(3);
  on_every_rank(comms, [&](int r, Communicator& c) {
    std::vector<float> v = values_of(r, n);
    c.all_reduce_sum(v.data(), n, GradientPrecision::bf16);
    got[static_cast<size_t>(r)] = v;
  });
  std::vector<std::vector<float>> terms;
  for (int r = 0; r < 3; ++r) terms.push_back(values_of(r, n));
  for (size_t i = 0; i < n; ++i) {
    float want = 0.0f;
    for (int r = 0; r < 3; ++r) want += from_bf16_bits(to_bf16_bits(terms[static_cast<size_t>(r)][i]));
    for (int r = 0; r < 3; ++r) ASSERT_EQ(bits(got[static_cast<size_t>(r)][i]), bits(want)) << i;
  }
}

TEST(InProcessCommunicator, ManyCollectivesInARowEachSeesItsOwnRound) {
  auto comms = make_inprocess_communicators(3, 30);
  on_every_rank(comms, [&](int r, Communicator& c) {
    for (int round = 0; round < 300; ++round) {
      int32_t mine = round * 10 + r, all[3];
      c.all_gather(&mine, sizeof mine, all);
      for (int q = 0; q < 3; ++q) ASSERT_EQ(all[q], round * 10 + q);
      int64_t word = r == 1 ? round : -1;
      c.broadcast(&word, sizeof word, 1);
      ASSERT_EQ(word, round);
      if (round % 7 == 0) c.barrier();
      ASSERT_EQ(c.first_nonzero(r == 2 && round == 5 ? 15 : 0), round == 5 ? 15 : 0);
    }
  });
}

TEST(InProcessCommunicator, ARankThatNeverComesIsNamedWithinTheTimeoutNotAHang) {
  auto comms = make_inprocess_communicators(3, 0.5);
  const auto start = Clock::now();
  std::vector<std::string> messages(2);
  std::vector<Code> codes(2);
  // Rank 2 is the test hook: it never joins the all-reduce.
  std::vector<std::future<void>> waiting;
  for (int r = 0; r < 2; ++r)
    waiting.push_back(std::async(std::launch::async, [&, r] {
      float x = 1.0f;
      codes[static_cast<size_t>(r)] =
          code_of([&] { comms[static_cast<size_t>(r)]->all_reduce_sum(&x, 1); }, &messages[static_cast<size_t>(r)]);
    }));
  for (auto& w : waiting) ASSERT_EQ(w.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "a hang";
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_GE(took, 0.45);
  EXPECT_LT(took, 15.0);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(codes[static_cast<size_t>(r)], Code::NODE_011);
    EXPECT_NE(messages[static_cast<size_t>(r)].find("GPU rank 2 did not join the collective"), std::string::npos)
        << messages[static_cast<size_t>(r)];
  }
  // The group is lost: the next collective fails at once, on any rank.
  const auto again = Clock::now();
  EXPECT_EQ(code_of([&] { comms[2]->barrier(); }), Code::NODE_011);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - again).count(), 0.4);
}

TEST(InProcessCommunicator, ARankThatGivesUpStopsTheOthersAtOnceWithItsError) {
  auto comms = make_inprocess_communicators(3, 60);
  const auto start = Clock::now();
  std::vector<std::future<Code>> waiting;
  for (int r = 0; r < 2; ++r)
    waiting.push_back(std::async(std::launch::async, [&, r] {
      float x = 1.0f;
      return code_of([&] { comms[static_cast<size_t>(r)]->all_reduce_sum(&x, 1); });
    }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  comms[2]->abandon(std::make_exception_ptr(UserError(Code::DEV_040, {}, "out of device memory on rank 2")));
  for (auto& w : waiting) {
    ASSERT_EQ(w.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "a hang";
    EXPECT_EQ(w.get(), Code::DEV_040);
  }
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 30.0);  // not the 60 s timeout
}

}  // namespace
}  // namespace sx
