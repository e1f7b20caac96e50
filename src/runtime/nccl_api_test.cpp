// NCCL loaded at run time (E-NODE-010 where it is not), and the watchdog
// over a table of fake entry points: an error and a collective that never
// ends both abort every communicator and stop with E-NODE-011.
#include "runtime/nccl_api.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "util/error.h"

namespace sx::nccl {
namespace {

using Clock = std::chrono::steady_clock;

std::string error_of(const std::function<void()>& f, Code want) {
  try {
    f();
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), want) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no UserError";
  return "";
}

TEST(Nccl, AbsentIsENode010NamingWhereItLooked) {
  // An empty folder, and a file there that is no library.
  auto dir = std::filesystem::temp_directory_path() / ("sx-nccl-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "libnccl.so.2") << "not a library";
  Library lib = load({(dir / "nowhere" / "libnccl.so.2").string(), (dir / "libnccl.so.2").string()});
  EXPECT_EQ(lib.api, nullptr);
  std::string msg = error_of([&] { require(lib); }, Code::NODE_010);
  EXPECT_NE(msg.find("no such file: " + (dir / "nowhere" / "libnccl.so.2").string()), std::string::npos) << msg;
  EXPECT_NE(msg.find((dir / "libnccl.so.2").string() + ": "), std::string::npos) << msg;
  EXPECT_NE(error_of([] { require(load({})); }, Code::NODE_010).find("no place to look"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Nccl, TheToolkitsLibraryLoadsWithEveryEntryPoint) {
  const Library& lib = library();
  if (!lib.api) GTEST_SKIP() << "no NCCL on this machine: " << lib.failure;
  EXPECT_GE(lib.version, 21800) << lib.path;  // 2.18 or newer
  EXPECT_EQ(version_text(22809), "2.28.9");
  EXPECT_EQ(version_text(2708), "2.7.8");
  EXPECT_STRNE(lib.api->get_error_string(kSystemError), "");
  // ncclGetUniqueId needs no GPU (it picks a network interface).
  UniqueId id{};
  EXPECT_EQ(lib.api->get_unique_id(&id), kSuccess);
}

// The fake NCCL of the watchdog tests: per communicator, what its async error says, and whether it was aborted.
std::atomic<int> g_async[3];
std::atomic<int> g_aborted[3];
Comm comm(int i) { return reinterpret_cast<Comm>(static_cast<uintptr_t>(i + 1)); }
int index_of(Comm c) { return static_cast<int>(reinterpret_cast<uintptr_t>(c)) - 1; }

Api fake_api() {
  Api a{};
  a.get_error_string = [](Result r) {
    return r == kRemoteError ? "remote process exited or there was a network error" : "unhandled system error";
  };
  a.get_last_error = [](Comm) { return "peer 2 closed the connection"; };
  a.comm_abort = [](Comm c) {
    ++g_aborted[index_of(c)];
    return kSuccess;
  };
  a.comm_get_async_error = [](Comm c, Result* r) {
    *r = g_async[index_of(c)].load();
    return kSuccess;
  };
  return a;
}

void reset() {
  for (auto& x : g_async) x = kInProgress;
  for (auto& x : g_aborted) x = 0;
}

TEST(NcclWatchdog, ACollectiveThatEndsReturnsAndAbortsNothing) {
  reset();
  Api a = fake_api();
  int polls = 0;
  watch_collective(
      a, {comm(0), comm(1), comm(2)}, 10, [&] { return ++polls > 20; }, "the all-reduce of step 3");
  EXPECT_GT(polls, 20);
  for (auto& x : g_aborted) EXPECT_EQ(x, 0);
}

TEST(NcclWatchdog, AnErrorOnOneRankAbortsEveryCommunicatorAndNamesIt) {
  reset();
  Api a = fake_api();
  g_async[1] = kRemoteError;
  const auto start = Clock::now();
  std::string msg = error_of(
      [&] {
        watch_collective(
            a, {comm(0), comm(1), comm(2)}, 60, [] { return false; }, "the all-reduce of step 3");
      },
      Code::NODE_011);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 5.0);  // at once, not the timeout
  EXPECT_NE(msg.find("NCCL failed in the all-reduce of step 3 on GPU rank 1: remote process exited or there was a "
                     "network error (peer 2 closed the connection)"),
            std::string::npos)
      << msg;
  for (auto& x : g_aborted) EXPECT_EQ(x, 1);
}

TEST(NcclWatchdog, ACollectiveThatNeverEndsIsStoppedAtTheTimeoutNotAHang) {
  reset();
  Api a = fake_api();
  const auto start = Clock::now();
  std::string msg = error_of(
      [&] {
        watch_collective(
            a, {comm(0), comm(1)}, 0.3, [] { return false; }, "the all-reduce of step 7");
      },
      Code::NODE_011);
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_GE(took, 0.29);
  EXPECT_LT(took, 10.0);
  EXPECT_NE(msg.find("the all-reduce of step 7 did not finish within SEXPGPU_NODE_TIMEOUT (0.3 s)"), std::string::npos)
      << msg;
  EXPECT_EQ(g_aborted[0], 1);
  EXPECT_EQ(g_aborted[1], 1);
  EXPECT_EQ(g_aborted[2], 0);
}

}  // namespace
}  // namespace sx::nccl
