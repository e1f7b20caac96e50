// Claiming a location (probe, lock, fresh-run check), reading only regular
// files, and deleting old checkpoints without following a symlink out.
#include "checkpoint/location.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "checkpoint/checkpoint_test_util.h"
#include "checkpoint/regular_file.h"
#include "checkpoint/safetensors.h"

namespace sx::ckpt {
namespace {

using testing::sample;
using testing::TempDir;
namespace fs = std::filesystem;

// The code of the UserError `f` throws; nullopt when it throws none.
std::optional<Code> code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.code();
  }
  return std::nullopt;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.diagnostics().front().message;
  }
  return "(no error)";
}

TEST(ClaimLocation, CreatesTheRunFolderAndLeavesNoProbe) {
  TempDir tmp;
  Location loc{tmp.path() + "/new/ckpt", false, {}, {}};
  auto lock = claim_location(loc, "my-run", false);
  EXPECT_TRUE(fs::is_directory(tmp.path() + "/new/ckpt/my-run"));
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(tmp.path() + "/new/ckpt/my-run"))
    names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{".lock"});
}

TEST(ClaimLocation, ARegularFileIsRefused) {
  TempDir tmp;
  testing::spit(tmp.path() + "/file", "x");
  Location loc{tmp.path() + "/file", false, {}, {}};
  EXPECT_TRUE(code_of([&] { claim_location(loc, "my-run", false); }) == Code::CKPT_050);
  EXPECT_NE(message_of([&] { claim_location(loc, "my-run", false); }).find(tmp.path() + "/file"), std::string::npos);
}

// A read-only folder, made for real: a read-only bind mount where the test may
// mount (root), else a folder without write permission (not root).
TEST(ClaimLocation, AReadOnlyFolderIsRefused) {
  TempDir tmp;
  std::string dir = tmp.path() + "/ro";
  fs::create_directories(dir + "/my-run");
  bool mounted = false;
  if (::geteuid() == 0) {
    if (::mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0 ||
        ::mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0) {
      ::umount(dir.c_str());
      GTEST_SKIP() << "as root, and a read-only bind mount is not possible here: " << std::strerror(errno);
    }
    mounted = true;
  } else {
    fs::permissions(dir + "/my-run", fs::perms::owner_read | fs::perms::owner_exec);
  }
  Location loc{dir, false, {}, {}};
  std::string msg = message_of([&] { claim_location(loc, "my-run", false); });
  auto code = code_of([&] { claim_location(loc, "my-run", false); });
  if (mounted)
    ::umount(dir.c_str());
  else
    fs::permissions(dir + "/my-run", fs::perms::owner_all);
  EXPECT_TRUE(code == Code::CKPT_050) << msg;
  EXPECT_NE(msg.find(dir + "/my-run"), std::string::npos) << msg;
}

TEST(ClaimLocation, ASecondClaimIsRefusedNamingTheHolder) {
  TempDir tmp;
  auto lock = claim_location(tmp.location(), "my-run", false);
  std::string msg = message_of([&] { claim_location(tmp.location(), "my-run", true); });
  EXPECT_NE(msg.find("pid " + std::to_string(::getpid()) + " on host "), std::string::npos) << msg;
  EXPECT_TRUE(code_of([&] { claim_location(tmp.location(), "my-run", true); }) == Code::CKPT_052);
  auto other = claim_location(tmp.location(), "other-slug", false);  // another slug is another folder
  lock.reset();
  EXPECT_NO_THROW(claim_location(tmp.location(), "my-run", true));  // released with the lock
}

TEST(ClaimLocation, AFreshRunIntoCheckpointsOfItsSlugIsRefused) {
  TempDir tmp;
  write_checkpoint(tmp.location(), "my-run", sample(4));
  std::string msg = message_of([&] { claim_location(tmp.location(), "my-run", false); });
  EXPECT_NE(msg.find("step-4"), std::string::npos) << msg;
  EXPECT_TRUE(code_of([&] { claim_location(tmp.location(), "my-run", false); }) == Code::CKPT_051);
  EXPECT_NO_THROW(claim_location(tmp.location(), "my-run", true));
  // Only a cut-short write there: nothing to mix with.
  fs::create_directories(tmp.path() + "/run2/step-3.partial-1");
  EXPECT_NO_THROW(claim_location(tmp.location(), "run2", false));
}

// A store that is not a local folder (S3, memory) is proven but not locked.
TEST(ClaimLocation, AStoreWithoutFlockIsProvenNotLocked) {
  auto store = memory_store();
  auto lock = claim_location(*store, false);
  EXPECT_TRUE(store->list().empty());  // the probe was deleted
  EXPECT_NO_THROW(claim_location(*store, true));
  write_checkpoint(*store, sample(3));
  EXPECT_TRUE(code_of([&] { claim_location(*store, false); }) == Code::CKPT_051);
}

TEST(RegularFile, AFifoIsRefusedAtOnce) {
  TempDir tmp;
  std::string fifo = tmp.path() + "/w.safetensors";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(code_of([&] { read_regular_file(fifo); }) == Code::CKPT_054);
  EXPECT_TRUE(code_of([&] { st::read_bytes(fifo); }) == Code::CKPT_054);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_NE(message_of([&] { st::read_bytes(fifo); }).find("a FIFO"), std::string::npos);
}

TEST(RegularFile, DevZeroIsRefused) {
  EXPECT_TRUE(code_of([&] { st::read_bytes("/dev/zero"); }) == Code::CKPT_054);
  EXPECT_NE(message_of([&] { st::read_bytes("/dev/zero"); }).find("a character device"), std::string::npos);
}

TEST(RegularFile, ACheckpointFileThatIsAFifoIsRefused) {
  TempDir tmp;
  write_checkpoint(tmp.location(), "my-run", sample(2));
  std::string state = tmp.path() + "/my-run/step-2/state.json";
  fs::remove(state);
  ASSERT_EQ(::mkfifo(state.c_str(), 0644), 0);
  EXPECT_TRUE(code_of([&] { read_checkpoint(tmp.path() + "/my-run/step-2"); }) == Code::CKPT_054);
}

TEST(RegularFile, AFolderKeepsItsOwnError) {
  TempDir tmp;
  EXPECT_TRUE(code_of([&] { st::read_bytes(tmp.path()); }) == Code::CKPT_001);
}

TEST(KeepNewest, NeverFollowsASymlinkOutOfTheRunFolder) {
  TempDir tmp;
  // Outside the run folder: a complete checkpoint someone else owns.
  write_checkpoint(tmp.location(), "elsewhere", sample(1));
  std::string outside = tmp.path() + "/elsewhere/step-1";
  for (int64_t s : {5, 6, 7}) write_checkpoint(tmp.location(), "my-run", sample(s));
  fs::create_directory_symlink(outside, tmp.path() + "/my-run/step-2");
  fs::create_directory_symlink(outside, tmp.path() + "/my-run/step-3.old-1");
  keep_newest(tmp.location(), "my-run", 1);
  write_checkpoint(tmp.location(), "my-run", sample(8));  // cleans leftovers too
  keep_newest(tmp.location(), "my-run", 1);
  for (const char* f : {"COMPLETE", "state.json", "model.safetensors", "optimizer.safetensors"})
    EXPECT_TRUE(fs::is_regular_file(outside + "/" + f)) << f;
  EXPECT_TRUE(read_checkpoint(outside).step == 1);
  EXPECT_FALSE(fs::exists(tmp.path() + "/my-run/step-5"));
  EXPECT_TRUE(fs::exists(tmp.path() + "/my-run/step-8/COMPLETE"));
  EXPECT_EQ(*find_latest(tmp.location(), "my-run"), tmp.path() + "/my-run/step-8");
}

}  // namespace
}  // namespace sx::ckpt
