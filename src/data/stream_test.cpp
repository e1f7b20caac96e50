#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <thread>

#include "data/eval_stream.h"
#include "data/fuzz.h"
#include "data/shuffle.h"
#include "data/test_util.h"
#include "data/train_stream.h"

namespace sx::data {
namespace {

using testing::error_of;

std::shared_ptr<const Dataset> iota_data(int64_t n, int64_t seq_len, std::string name = "train") {
  std::vector<int32_t> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), 0);
  return Dataset::from_tokens(std::move(name), std::move(t), seq_len, n);
}

// The first token of each record of a batch: identifies the window (k * seq-len).
std::vector<int32_t> take(TrainStream& s, int64_t records) {
  int64_t L = s.dataset().seq_len();
  std::vector<int32_t> tok(static_cast<size_t>(records * L)), tgt(tok.size());
  s.next_batch(records, tok.data(), tgt.data());
  std::vector<int32_t> firsts;
  for (int64_t r = 0; r < records; ++r) {
    for (int64_t i = 0; i < L; ++i)
      EXPECT_EQ(tgt[r * L + i], tok[r * L + i] + 1);  // iota: target = next token
    firsts.push_back(tok[r * L]);
  }
  return firsts;
}

TEST(Windows, CountAndContent) {
  for (int64_t n : {5, 16, 17, 18, 33}) EXPECT_EQ(iota_data(n, 4)->num_windows(), (n - 1) / 4) << n;
  auto d = iota_data(10, 3);  // windows 0..2: tokens [0..3], [3..6], [6..9]
  std::vector<int32_t> tok(3), tgt(3);
  d->window(1, tok.data(), tgt.data());
  EXPECT_EQ(tok, (std::vector<int32_t>{3, 4, 5}));
  EXPECT_EQ(tgt, (std::vector<int32_t>{4, 5, 6}));
  d->window(2, tok.data(), tgt.data());
  EXPECT_EQ(tgt.back(), 9);  // consecutive windows share one token; every token is a target once
}

TEST(Train, InOrderWrapsToNewEpoch) {
  TrainStream s(iota_data(13, 4), {0, false, 2, 0, nullptr});  // 3 windows
  EXPECT_EQ(take(s, 2), (std::vector<int32_t>{0, 4}));
  EXPECT_EQ(take(s, 2), (std::vector<int32_t>{8, 0}));
  EXPECT_EQ(s.position().epoch, 1);
  EXPECT_EQ(s.position().index, 1);
  EXPECT_EQ(s.position().records(), 4);
  EXPECT_EQ(s.position().offset, 4);
}

TEST(Shuffle, PermutationVisitsEachWindowOnce) {
  for (int64_t n : {1, 2, 7, 1000}) {
    auto p = epoch_permutation(n, 1, "train", 0);
    std::sort(p.begin(), p.end());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(p[i], i);
  }
}

TEST(Shuffle, DeterministicAndDifferentPerEpochSeedAndLoader) {
  auto a = epoch_permutation(100, 7, "train", 0);
  EXPECT_EQ(a, epoch_permutation(100, 7, "train", 0));
  EXPECT_NE(a, epoch_permutation(100, 7, "train", 1));
  EXPECT_NE(a, epoch_permutation(100, 8, "train", 0));
  EXPECT_NE(a, epoch_permutation(100, 7, "other", 0));
  std::vector<int64_t> id(100);
  std::iota(id.begin(), id.end(), 0);
  EXPECT_NE(a, id);
}

TEST(Shuffle, PinnedValues) {
  // The order is part of the run's reproducibility across machines: pin it.
  EXPECT_EQ(epoch_permutation(10, 1, "train", 0), (std::vector<int64_t>{2, 9, 3, 7, 0, 1, 6, 5, 8, 4}));
  EXPECT_EQ(epoch_permutation(10, 1, "train", 1), (std::vector<int64_t>{4, 3, 5, 6, 1, 8, 7, 0, 9, 2}));
  PhiloxWords w(shuffle_key(0), loader_stream(""), 0);
  EXPECT_EQ(loader_stream(""), 2166136261u);
  EXPECT_EQ(w.next(), philox::bits(shuffle_key(0), 2166136261u, 0, 0));
  EXPECT_EQ(w.next(), philox::bits(shuffle_key(0), 2166136261u, 0, 1));
}

TEST(Shuffle, BoundedIsRoughlyUniform) {
  PhiloxWords w(1, 2, 3);
  std::vector<int> counts(6);
  for (int i = 0; i < 60000; ++i) counts[bounded(w, 6)]++;
  for (int c : counts) EXPECT_NEAR(c, 10000, 500);
  EXPECT_EQ(bounded(w, 1), 0u);
}

TEST(Train, ShuffledEpochsArePermutations) {
  TrainStream s(iota_data(41, 4), {3, true, 5, 0, nullptr});  // 10 windows
  auto e0 = take(s, 10), e1 = take(s, 10);
  EXPECT_NE(e0, e1);
  std::sort(e0.begin(), e0.end());
  std::sort(e1.begin(), e1.end());
  EXPECT_EQ(e0, e1);
  EXPECT_EQ(e0.front(), 0);
  EXPECT_EQ(e0.back(), 36);
}

TEST(Train, PrefetchGivesTheSameBatches) {
  for (bool shuffle : {false, true}) {
    TrainStream a(iota_data(101, 4), {9, shuffle, 4, 0, nullptr});
    TrainStream b(iota_data(101, 4), {9, shuffle, 4, 3, nullptr});
    for (int64_t records : {4, 4, 2, 2, 7, 1, 4, 25, 30, 4})  // microbatches, odd sizes, several epochs
      ASSERT_EQ(take(a, records), take(b, records)) << records;
    EXPECT_EQ(a.position(), b.position());
  }
}

TEST(Train, PositionRestoreContinuesIdentically) {
  for (int prefetch : {0, 2}) {
    TrainStream a(iota_data(41, 4), {5, true, 3, prefetch, nullptr});
    take(a, 3), take(a, 3), take(a, 3), take(a, 3);  // into the second epoch
    Position p = position_from_json(nlohmann::json::parse(position_to_json(a.position()).dump()));
    EXPECT_EQ(p, a.position());
    EXPECT_EQ(p.epoch, 1);
    TrainStream b(iota_data(41, 4), {5, true, 3, prefetch, nullptr});
    take(b, 3);
    b.restore(p);
    for (int i = 0; i < 10; ++i) ASSERT_EQ(take(a, 3), take(b, 3));
  }
}

TEST(Train, RestoreRefusesAnotherLoadersPosition) {
  TrainStream s(iota_data(41, 4), {5, true, 3, 0, nullptr});
  Position p = s.position();
  p.windows = 11;
  EXPECT_EQ(error_of([&] { s.restore(p); }).code(), Code::DATA_014);
  p = s.position(), p.seed = 6;
  EXPECT_EQ(error_of([&] { s.restore(p); }).code(), Code::DATA_014);
  p = s.position(), p.index = 10;
  EXPECT_EQ(error_of([&] { s.restore(p); }).code(), Code::DATA_014);
  EXPECT_EQ(error_of([] { position_from_json(nlohmann::json{{"epoch", 1}}); }).code(), Code::DATA_014);
}

TEST(Train, TooFewWindowsForABatch) {
  auto e = error_of([] { TrainStream s(iota_data(13, 4), {0, true, 4, 2, nullptr}); });
  EXPECT_EQ(e.code(), Code::DATA_012);
  EXPECT_NE(std::string(e.what()).find("loader `train` has 3 windows"), std::string::npos) << e.what();
}

TEST(Train, CancelEndsAWaitPromptly) {
  auto data = iota_data(1 << 16, 4);
  TrainStream s(data, {0, true, 64, 2, nullptr});
  std::vector<int32_t> tok(64 * 4 * 1000), tgt(tok.size());
  std::thread t([&] { std::this_thread::sleep_for(std::chrono::milliseconds(20)), s.cancel(); });
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(for (;;) s.next_batch(64 * 1000, tok.data(), tgt.data()), Cancelled);
  t.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  std::atomic<bool> stop{true};
  TrainStream s2(data, {0, true, 4, 2, &stop});
  EXPECT_THROW(take(s2, 4), Cancelled);
  Position p = s2.position();
  EXPECT_EQ(p.records(), 0);
}

TEST(Train, DestructionStopsTheThreadPromptly) {
  auto data = iota_data(1 << 12, 4);
  for (int i = 0; i < 20; ++i) {
    TrainStream s(data, {0, true, 8, 4, nullptr});
    if (i % 2) take(s, 8);
  }
}

TEST(Eval, StartsAtWindowZeroInOrder) {
  EvalStream e(iota_data(41, 4), 3, 2, "eval");  // 10 windows
  EXPECT_EQ(e.batches(), 2);
  std::vector<int32_t> tok(12), tgt(12);
  e.get(1, tok.data(), tgt.data());
  EXPECT_EQ(tok[0], 12);
  EXPECT_EQ(tok[8], 20);
  EXPECT_EQ(tgt[11], 24);
  EXPECT_EQ(EvalStream(iota_data(41, 4), 3, std::nullopt, "eval").batches(), 3);  // the whole source
}

TEST(Eval, TooFewWindowsForAPass) {
  auto e = error_of([] { EvalStream s(iota_data(41, 4), 3, 4, "eval"); });
  EXPECT_EQ(e.code(), Code::DATA_012);
  EXPECT_NE(std::string(e.what()).find("pass `eval` (4 batches of 3) needs 12"), std::string::npos)
      << e.what();
  EXPECT_EQ(error_of([] { EvalStream s(iota_data(41, 4), 11, std::nullopt, "eval"); }).code(),
            Code::DATA_012);
}

TEST(Counters, RecordsAndTokens) {
  Counters c;
  for (int i = 0; i < 20; ++i) c.add(8, 16);
  EXPECT_EQ(c.records, 160);  // the seed's numbers
  EXPECT_EQ(c.tokens, 2720);
}

TEST(Fuzz, NeverCrashes) {
  PhiloxWords w(42, 0, 0);
  for (int i = 0; i < 300; ++i) {
    std::string s(bounded(w, 64), '\0');
    for (char& c : s) c = static_cast<char>(w.next() & (i % 2 ? 0x7f : 0xff));
    if (i % 5 == 0) s = "{\"text\":\"" + s + "\"}\n";
    fuzz_data_formats(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
  fuzz_data_formats(nullptr, 0);
}

}  // namespace
}  // namespace sx::data
