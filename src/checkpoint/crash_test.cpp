// Crash safety: a child writes checkpoints in a loop (replacing the latest
// first, as a rerun after a hard kill does, then new steps, keeping 2) and is
// SIGKILLed at random instants. After every kill the latest checkpoint is
// complete and loadable, its files come from one write, and it never goes back.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <random>

#include "checkpoint/checkpoint.h"
#include "checkpoint/checkpoint_test_util.h"
#include "checkpoint/folders.h"

namespace sx::ckpt {
namespace {

using namespace testing;

[[noreturn]] void write_forever(const Location& loc, int64_t from, float salt) {
  try {
    for (int64_t step = from;; ++step) {
      write_checkpoint(loc, "r", sample(step, salt));
      keep_newest(loc, "r", 2);
    }
  } catch (...) {
    ::_exit(3);
  }
}

TEST(CrashSafety, KilledAtAnyInstantTheLatestIsCompleteAndLoadable) {
  TempDir tmp;
  auto loc = tmp.location();
  std::mt19937 rng(20261129);
  // Kills land within about two writes' time, where the replacement happens.
  double write_s = write_checkpoint(loc, "r", sample(0)).seconds;
  int max_us = static_cast<int>(std::clamp(write_s * 2.5e6, 2000.0, 200000.0));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  int64_t last = 0;
  int trials = 0;
  while (trials < 300 && (trials < 10 || std::chrono::steady_clock::now() < deadline)) {
    float salt = static_cast<float>(trials);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) write_forever(loc, std::max<int64_t>(last, 0), salt);
    ::usleep(std::uniform_int_distribution<int>(0, trials % 4 == 0 ? 4 * max_us : max_us)(rng));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the writer failed: status " << status;
    ++trials;

    auto latest = find_latest(loc, "r");
    ASSERT_TRUE(latest) << "trial " << trials << ": the checkpoints vanished";
    CheckpointData d;
    ASSERT_NO_THROW(d = read_checkpoint(*latest))
        << *latest << ": " << message_of([&] { read_checkpoint(*latest); });
    ASSERT_GE(d.step, last) << *latest;
    // The model and the optimizer files come from the same write.
    float written_salt = d.optimizer.at("adamw.v/layer/w").values[5];
    EXPECT_EQ(d.model.at("layer/b").values[2], static_cast<float>(d.step) + written_salt);
    EXPECT_EQ(d.optimizer.at("adamw.m/layer/w").values[5], static_cast<float>(d.step));
    last = d.step;
  }
  EXPECT_GT(last, 0) << trials << " trials, a write takes " << write_s << "s";
  std::cerr << trials << " kills, a write takes " << write_s << "s, reached step " << last << "\n";
  // Whatever the kills left, one more write cleans it up.
  write_checkpoint(loc, "r", sample(last + 1));
  keep_newest(loc, "r", 2);
  for (const std::string& name : names_in(tmp.path() + "/r"))
    EXPECT_EQ(parse_folder(name)->kind, FolderKind::step) << name;
  EXPECT_LE(names_in(tmp.path() + "/r").size(), 2u);
}

// The same at every step of the protocol, deterministically: a store that dies
// (throws something no cleanup catches) before its k-th change.
struct Died {};

class DyingStore final : public CheckpointStore {
 public:
  DyingStore(CheckpointStore& inner, int lives) : inner_(inner), lives_(lives) {}
  std::string where(const std::string& f) const override { return inner_.where(f); }
  std::vector<std::string> list() const override { return inner_.list(); }
  bool exists(const std::string& f, const std::string& n) const override { return inner_.exists(f, n); }
  std::optional<std::string> read(const std::string& f, const std::string& n) const override {
    return inner_.read(f, n);
  }
  void put(const std::string& f, const std::string& n, std::string_view b) override {
    live();
    inner_.put(f, n, b);
  }
  void rename(const std::string& a, const std::string& b) override {
    live();
    inner_.rename(a, b);
  }
  void remove(const std::string& f) override {
    live();
    inner_.remove(f);
  }
  bool died() const { return lives_ < 0; }

 private:
  void live() {
    if (--lives_ < 0) throw Died{};
  }
  CheckpointStore& inner_;
  int lives_;
};

TEST(CrashSafety, DyingBeforeEveryChange) {
  for (int64_t replaced : {4, 3}) {  // a new step, then one that exists
    for (int lives = 0;; ++lives) {
      auto store = memory_store();
      for (int64_t s : {1, 2, 3}) write_checkpoint(*store, sample(s));
      store->put("step-9.partial-1", kModelFile, "left over");
      DyingStore dying(*store, lives);
      try {
        write_checkpoint(dying, sample(replaced, 0.5f));
        keep_newest(dying, 2);
      } catch (const Died&) {
      }
      auto latest = find_latest(*store);
      ASSERT_TRUE(latest) << lives;
      CheckpointData d = read_checkpoint(*store, *latest);
      EXPECT_GE(d.step, 3) << lives;
      float salt = d.optimizer.at("adamw.v/layer/w").values[5];
      EXPECT_EQ(d.model.at("layer/b").values[2], static_cast<float>(d.step) + salt) << lives;
      // The next write cleans whatever the death left.
      write_checkpoint(*store, sample(5));
      keep_newest(*store, 2);
      auto left = store->list();
      ASSERT_EQ(left.size(), 2u) << lives;
      EXPECT_EQ(left[0], d.step == 4 ? "step-4" : "step-3") << lives;
      EXPECT_EQ(left[1], "step-5") << lives;
      if (!dying.died()) break;
    }
  }
}

}  // namespace
}  // namespace sx::ckpt
