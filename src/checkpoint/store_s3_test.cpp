// Checkpoints in S3 (moto): written in place with COMPLETE last, latest and
// resume ignoring a prefix without COMPLETE, keep, and refusals.
#include <gtest/gtest.h>

#include "checkpoint/checkpoint.h"
#include "checkpoint/checkpoint_test_util.h"
#include "s3/client.h"
#include "s3/moto_test_util.h"

namespace sx::ckpt {
namespace {

using s3::testing::moto;

using s3::testing::error_of;

class S3Checkpoints : public ::testing::Test {
 protected:
  void SetUp() override {
    SX_REQUIRE_MOTO();
    client_ = s3::testing::test_client(moto().checkpoint);
    s3::set_client(S3Role::checkpoint, client_);
    prefix_ = "ckpt/" + s3::testing::test_prefix();
    location_ = Location{"s3://" + moto().checkpoint_bucket + "/" + prefix_, true, moto().checkpoint_bucket, prefix_};
  }
  void TearDown() override { s3::set_client(S3Role::checkpoint, nullptr); }
  std::string key(const std::string& rest) const { return prefix_ + "/run/" + rest; }

  std::shared_ptr<s3::Client> client_;
  std::string prefix_;
  Location location_;
};

TEST_F(S3Checkpoints, WriteFindReadKeep) {
  EXPECT_EQ(find_latest(location_, "run"), std::nullopt);
  auto w = write_checkpoint(location_, "run", testing::sample(10));
  EXPECT_EQ(w.path, location_.text + "/run/step-10");
  write_checkpoint(location_, "run", testing::sample(20));
  write_checkpoint(location_, "run", testing::sample(3));
  EXPECT_EQ(find_latest(location_, "run"), location_.text + "/run/step-20");
  CheckpointData d = read_checkpoint(location_.text + "/run/step-20");
  EXPECT_EQ(d.step, 20);
  EXPECT_EQ(d.model.at("layer/b").values, testing::sample(20).model.at("layer/b").values);
  EXPECT_EQ(d.state["slug"], "my-run");
  // Every object is under step-<n>/: no partial folders in S3.
  for (const auto& o : client_->list(moto().checkpoint_bucket, key("")).objects)
    EXPECT_TRUE(o.key.find(".partial") == std::string::npos) << o.key;

  keep_newest(location_, "run", 2);
  EXPECT_FALSE(client_->head(moto().checkpoint_bucket, key("step-3/COMPLETE")));
  EXPECT_TRUE(client_->list(moto().checkpoint_bucket, key("step-3/")).objects.empty());
  EXPECT_TRUE(client_->head(moto().checkpoint_bucket, key("step-10/COMPLETE")));
}

TEST_F(S3Checkpoints, PrefixWithoutCompleteIsIgnored) {
  write_checkpoint(location_, "run", testing::sample(5));
  auto w = write_checkpoint(location_, "run", testing::sample(9));
  client_->remove(moto().checkpoint_bucket, key("step-9/COMPLETE"));  // an upload cut short
  EXPECT_EQ(find_latest(location_, "run"), location_.text + "/run/step-5");
  auto e = error_of([&] { read_checkpoint(w.path); });
  EXPECT_EQ(e.code(), Code::CKPT_022) << e.what();
  // Written again, it replaces the half one.
  write_checkpoint(location_, "run", testing::sample(9, 1.5f));
  EXPECT_EQ(read_checkpoint(w.path).model.at("layer/b").values[2], 10.5f);
}

TEST_F(S3Checkpoints, RewriteOfACompleteStep) {
  write_checkpoint(location_, "run", testing::sample(4));
  write_checkpoint(location_, "run", testing::sample(4, 2.0f));
  EXPECT_EQ(read_checkpoint(location_.text + "/run/step-4").model.at("layer/b").values[2], 6.0f);
}

TEST_F(S3Checkpoints, CorruptObjectIsRefused) {
  auto w = write_checkpoint(location_, "run", testing::sample(7));
  client_->put(moto().checkpoint_bucket, key("step-7/model.safetensors"), "garbage");
  EXPECT_EQ(error_of([&] { read_checkpoint(w.path); }).code(), Code::CKPT_023);
  EXPECT_EQ(error_of([&] { read_checkpoint(location_.text + "/run/step-8"); }).code(), Code::CKPT_021);
}

TEST_F(S3Checkpoints, StoreRenameCopiesCompleteLast) {
  auto store = open_store(location_, "run");
  store->put("a", "x", "1");
  store->put("a", "COMPLETE", "c");
  store->rename("a", "b");
  EXPECT_FALSE(store->exists("a"));
  EXPECT_EQ(store->read("b", "x"), "1");
  EXPECT_EQ(store->read("b", "COMPLETE"), "c");
  EXPECT_EQ(store->where("b"), location_.text + "/run/b");
}

TEST(S3CheckpointCredentials, MissingAreNamed) {
  s3::set_client(S3Role::checkpoint, nullptr);
  s3::set_credentials(S3Credentials{S3Role::checkpoint, {}, {}, {}, {}, {}});
  Location l{"s3://b/p", true, "b", "p"};
  auto e = error_of([&] { find_latest(l, "run"); });
  EXPECT_EQ(e.code(), Code::ENV_002);
  EXPECT_NE(e.first().notes.at(0).find("SEXPGPU_CHECKPOINT_AWS_ACCESS_KEY_ID"), std::string::npos);
  EXPECT_EQ(error_of([&] { read_checkpoint("s3://b/p/run/step-1"); }).code(), Code::ENV_002);
}

}  // namespace
}  // namespace sx::ckpt
