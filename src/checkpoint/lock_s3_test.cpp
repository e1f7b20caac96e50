// The S3 run folder's lease lock (moto): taken once, refused to a second
// holder, renewed, lost to a take-over, stale locks taken over, released.
#include "checkpoint/lock_s3.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "s3/client.h"
#include "s3/moto_test_util.h"
#include "util/error.h"

namespace sx::ckpt {
namespace {

using s3::testing::moto;

using s3::testing::error_of;

int64_t now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

class S3Lock : public ::testing::Test {
 protected:
  void SetUp() override {
    SX_REQUIRE_MOTO();
    client_ = s3::testing::test_client(moto().checkpoint);
    key_ = "lock/" + s3::testing::test_prefix() + "/.lock";
  }
  std::unique_ptr<RunLock> take(int64_t lease_s = kS3LeaseSeconds) {
    return lock_s3(client_, bucket(), key_, "s3://" + bucket() + "/" + key_, lease_s);
  }
  const std::string& bucket() const { return moto().checkpoint_bucket; }
  std::optional<nlohmann::json> object() {
    auto got = client_->get(bucket(), key_);
    if (!got) return std::nullopt;
    return nlohmann::json::parse(*got);
  }
  // A lock of another run; `processes` as this process's own lock says it (its process table) when empty.
  void write(int64_t pid, const std::string& on_host, int64_t expires, std::string processes = {}) {
    if (processes.empty()) {
      std::ifstream boot("/proc/sys/kernel/random/boot_id");
      std::getline(boot, processes);
      struct stat st {};
      ::stat("/proc/self/ns/pid", &st);
      processes += "/" + std::to_string(st.st_ino);
    }
    nlohmann::json j = {{"pid", pid},         {"host", on_host},         {"since", now_s() - 100},
                        {"expires", expires}, {"token", "someone-else"}, {"processes", processes}};
    client_->put(bucket(), key_, j.dump());
  }

  std::shared_ptr<s3::Client> client_;
  std::string key_;
};

TEST_F(S3Lock, HeldOnceAndReleased) {
  {
    auto lock = take();
    auto o = object();
    ASSERT_TRUE(o);
    EXPECT_EQ((*o)["pid"], ::getpid());
    EXPECT_EQ((*o)["host"], host());
    EXPECT_GE((*o)["expires"].get<int64_t>(), now_s() + kS3LeaseSeconds - 5);
    UserError e = error_of([&] { take(); });
    EXPECT_EQ(e.code(), Code::CKPT_052);
    EXPECT_NE(e.diagnostics().front().message.find(fmt::format("pid {} on host {}", ::getpid(), host())),
              std::string::npos)
        << e.diagnostics().front().message;
  }
  EXPECT_FALSE(object()) << "the lock outlived its holder";
}

TEST_F(S3Lock, RenewedOnlyOnceAQuarterIsGone) {
  auto lock = take(4);
  int64_t first = (*object())["expires"];
  lock->renew();  // at once: nothing to do
  EXPECT_EQ((*object())["expires"], first);
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  lock->renew();
  EXPECT_GT((*object())["expires"].get<int64_t>(), first);
}

TEST_F(S3Lock, LostToAnotherRunStopsTheRenewalAndIsNotDeleted) {
  {
    auto lock = take(4);
    write(4242, "other-host", now_s() + 600);  // another run took it over
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    UserError e = error_of([&] { lock->renew(); });
    EXPECT_EQ(e.code(), Code::CKPT_056);
    EXPECT_NE(e.diagnostics().front().message.find("pid 4242 on host other-host"), std::string::npos);
  }
  auto o = object();
  ASSERT_TRUE(o) << "the new holder's lock was deleted";
  EXPECT_EQ((*o)["token"], "someone-else");
}

TEST_F(S3Lock, StaleLocksAreTakenOver) {
  write(4242, "other-host", now_s() - 1);  // its lease ran out
  { auto lock = take(); }
  write(999'999'999, host(), now_s() + 600);  // a process gone from this host
  { auto lock = take(); }
  // The same host name, another process table (a container with host networking): not looked up.
  write(999'999'999, host(), now_s() + 600, "another-boot/4026531836");
  EXPECT_EQ(error_of([&] { take(); }).code(), Code::CKPT_052);
  write(4242, "other-host", now_s() + 600);  // alive elsewhere: held
  EXPECT_EQ(error_of([&] { take(); }).code(), Code::CKPT_052);
  client_->put(bucket(), key_, "not json");
  UserError e = error_of([&] { take(); });
  EXPECT_EQ(e.code(), Code::CKPT_052);
  EXPECT_NE(e.diagnostics().front().message.find("not a lock sexpgpu wrote"), std::string::npos);
}

TEST_F(S3Lock, ConfirmedBeforeACheckpointWhateverItsAge) {
  auto lock = take();
  lock->confirm();  // ours: nothing to say
  client_->remove(bucket(), key_);
  UserError e = error_of([&] { lock->confirm(); });  // a renew would wait for a quarter of the lease
  EXPECT_EQ(e.code(), Code::CKPT_056);
  EXPECT_NE(e.diagnostics().front().message.find("it was deleted"), std::string::npos);
}

TEST_F(S3Lock, ConditionalPutsAsS3Has) {
  EXPECT_TRUE(client_->put_if(bucket(), key_, "a", ""));
  EXPECT_FALSE(client_->put_if(bucket(), key_, "b", "")) << "If-None-Match: * over an object";
  auto got = client_->get_with_etag(bucket(), key_);
  ASSERT_TRUE(got);
  EXPECT_TRUE(client_->put_if(bucket(), key_, "c", got->second));
  EXPECT_FALSE(client_->put_if(bucket(), key_, "d", got->second)) << "If-Match on a stale etag";
  EXPECT_EQ(client_->get(bucket(), key_), "c");
}

}  // namespace
}  // namespace sx::ckpt
