// A write that fails is an E-CKPT-020 naming the path and the system's reason,
// and the previous checkpoints stay loadable. The tests run as root, which
// ignores permissions, so failures come from a path through a regular file and
// from a file size limit (the kernel's EFBIG, like a full disk).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "checkpoint/checkpoint.h"
#include "checkpoint/checkpoint_test_util.h"

namespace sx::ckpt {
namespace {

using namespace testing;

// A checkpoint bigger than `limit` bytes in one file.
CheckpointData big(int64_t step) {
  CheckpointData d = sample(step);
  d.model["big"] = {{4096}, std::vector<float>(4096, 1.0f)};
  return d;
}

TEST(WriteFailure, LocationIsARegularFile) {
  TempDir tmp;
  spit(tmp.path() + "/file", "x");
  Location loc{tmp.path() + "/file", false, {}, {}};
  std::string msg = message_of([&] { write_checkpoint(loc, "r", sample(1)); });
  EXPECT_EQ(code_of([&] { write_checkpoint(loc, "r", sample(1)); }), "E-CKPT-020");
  EXPECT_NE(msg.find(tmp.path() + "/file/r"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Not a directory"), std::string::npos) << msg;
  // Reading that location is an error too, not "no checkpoint yet".
  Location through{tmp.path() + "/file/deeper", false, {}, {}};
  EXPECT_EQ(code_of([&] { find_latest(through, "r"); }), "E-CKPT-027");
  spit(tmp.path() + "/r-as-file", "x");
  EXPECT_EQ(code_of([&] { find_latest(tmp.location(), "r-as-file"); }), "E-CKPT-027");
}

TEST(WriteFailure, RunFolderIsARegularFile) {
  TempDir tmp;
  spit(tmp.path() + "/r", "x");
  EXPECT_EQ(code_of([&] { write_checkpoint(tmp.location(), "r", sample(1)); }), "E-CKPT-020");
}

// In a child limited to `limit` bytes per file: write `d`, exit 0 when it fails
// with E-CKPT-020 naming the reason, 1 when it succeeds, 2 otherwise.
int write_limited(const Location& loc, const CheckpointData& d, rlim_t limit) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit rl{limit, limit};
    ::setrlimit(RLIMIT_FSIZE, &rl);
    try {
      write_checkpoint(loc, "r", d);
      ::_exit(1);
    } catch (const UserError& e) {
      bool ok = e.code() == Code::CKPT_020 &&
                e.diagnostics()[0].message.find("File too large") != std::string::npos;
      ::_exit(ok ? 0 : 2);
    } catch (...) {
      ::_exit(3);
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

TEST(WriteFailure, DiskFullKeepsThePreviousCheckpoints) {
  TempDir tmp;
  auto loc = tmp.location();
  std::string run = tmp.path() + "/r";
  write_checkpoint(loc, "r", sample(1));
  write_checkpoint(loc, "r", sample(2, 0.5f));
  EXPECT_EQ(write_limited(loc, big(3), 8192), 0);
  // Replacing a step that exists fails the same way and keeps the old one.
  EXPECT_EQ(write_limited(loc, big(2), 8192), 0);
  EXPECT_EQ(names_in(run), (std::vector<std::string>{"step-1", "step-2"}));
  ASSERT_EQ(find_latest(loc, "r"), run + "/step-2");
  EXPECT_EQ(read_checkpoint(run + "/step-2").model["layer/b"].values[2], 2.5f);
  EXPECT_EQ(read_checkpoint(run + "/step-1").step, 1);
}

}  // namespace
}  // namespace sx::ckpt
