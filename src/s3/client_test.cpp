// The client against moto (tests/s3/moto.py): every request kind, paging,
// multipart, the roles' credentials, and errors that never show a secret.
#include "s3/client.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "s3/moto_test_util.h"
#include "util/error.h"

namespace sx::s3 {
namespace {

using testing::moto;
using testing::moto_auth;
using testing::test_client;
using testing::test_prefix;

using testing::error_of;

TEST(S3Address, Parse) {
  EXPECT_EQ(parse_address("s3://b/a/k").bucket, "b");
  EXPECT_EQ(parse_address("s3://b/a/k").key, "a/k");
  EXPECT_EQ(parse_address("s3://b").key, "");
  EXPECT_EQ(error_of([] { parse_address("s3:///k"); }).code(), Code::S3_007);
  EXPECT_EQ(percent_encode("a b/ü~", true), "a%20b/%C3%BC~");
  EXPECT_EQ(percent_encode("a/b", false), "a%2Fb");
}

TEST(S3Client, SignedRequestsAreAccepted) {
  SX_REQUIRE_MOTO_AUTH();
  auto c = test_client(moto_auth().data);
  const std::string& b = moto_auth().data_bucket;
  c->put(b, "signed/a-b_1.txt", "x");
  EXPECT_EQ(c->get(b, "signed/a-b_1.txt"), "x");
  EXPECT_EQ(c->get_range(b, "signed/a-b_1.txt", 0, 1), "x");
  EXPECT_TRUE(c->head(b, "signed/a-b_1.txt"));
  EXPECT_EQ(c->list(b, "signed").objects.size(), 1u);
  c->remove(b, "signed/a-b_1.txt");
}

TEST(S3Client, PutGetHeadListDelete) {
  SX_REQUIRE_MOTO();
  auto c = test_client(moto().data);
  const std::string& b = moto().data_bucket;
  std::string p = test_prefix();
  std::vector<std::string> keys = {p + "/a b.txt", p + "/dir/ü.bin", p + "/dir/x(1)!*'.bin", p + "/empty"};
  for (const auto& k : keys) c->put(b, k, k == keys[3] ? "" : "body of " + k);
  for (const auto& k : keys) EXPECT_EQ(c->get(b, k), k == keys[3] ? "" : "body of " + k);
  auto h = c->head(b, keys[1]);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->size, ("body of " + keys[1]).size());
  EXPECT_EQ(c->head(b, p + "/none"), std::nullopt);
  EXPECT_EQ(c->get(b, p + "/none"), std::nullopt);

  Listing all = c->list(b, p + "/");
  ASSERT_EQ(all.objects.size(), 4u);
  EXPECT_EQ(all.objects[0].key, keys[0]);
  Listing top = c->list(b, p + "/", "/");
  EXPECT_EQ(top.objects.size(), 2u);
  EXPECT_EQ(top.prefixes, std::vector<std::string>{p + "/dir/"});

  c->copy(b, keys[0], p + "/copied");
  EXPECT_EQ(c->get(b, p + "/copied"), "body of " + keys[0]);
  c->remove(b, keys[0]);
  c->remove(b, keys[0]);  // twice: nothing
  EXPECT_EQ(c->head(b, keys[0]), std::nullopt);
}

TEST(S3Client, RangedGet) {
  SX_REQUIRE_MOTO();
  auto c = test_client(moto().data);
  const std::string& b = moto().data_bucket;
  std::string k = test_prefix() + "/r";
  c->put(b, k, "0123456789");
  EXPECT_EQ(c->get_range(b, k, 2, 3), "234");
  EXPECT_EQ(c->get_range(b, k, 9, 1), "9");
  EXPECT_EQ(c->get_range(b, k, 0, 0), "");
  EXPECT_EQ(error_of([&] { c->get_range(b, k, 8, 5); }).code(), Code::S3_006);
  EXPECT_EQ(error_of([&] { c->get_range(b, k, 20, 1); }).code(), Code::S3_006);
  EXPECT_EQ(error_of([&] { c->get_range(b, k + "x", 0, 1); }).code(), Code::S3_002);
}

TEST(S3Client, ListPages) {
  SX_REQUIRE_MOTO();
  Config cfg = config_from(moto().data);
  cfg.list_page_size = 2;
  Client c(cfg);
  const std::string& b = moto().data_bucket;
  std::string p = test_prefix();
  for (int i = 0; i < 7; ++i) c.put(b, fmt::format("{}/k{}", p, i), "x");
  Listing l = c.list(b, p + "/");
  ASSERT_EQ(l.objects.size(), 7u);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(l.objects[i].key, fmt::format("{}/k{}", p, i));
  EXPECT_TRUE(c.list(b, p + "/none").objects.empty());
}

TEST(S3Client, Multipart) {
  SX_REQUIRE_MOTO();
  Config cfg = config_from(moto().data);
  cfg.multipart_threshold = 6 << 20;
  cfg.part_size = 5 << 20;
  Client c(cfg);
  const std::string& b = moto().data_bucket;
  std::string k = test_prefix() + "/big";
  std::string big(12 << 20, 0);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 2654435761u >> 13);
  c.put(b, k, big);
  EXPECT_EQ(c.head(b, k)->size, big.size());
  EXPECT_TRUE(c.get(b, k) == big);
  EXPECT_EQ(c.get_range(b, k, (5 << 20) - 2, 4), big.substr((5 << 20) - 2, 4));
}

TEST(S3Client, WrongSecretIsRefusedAndNeverShown) {
  SX_REQUIRE_MOTO_AUTH();
  S3Credentials bad = moto_auth().data;
  bad.secret_access_key = Secret("not-the-secret-0123456789", "SEXPGPU_DATA_AWS_SECRET_ACCESS_KEY");
  auto c = test_client(bad);
  auto e = error_of([&] { c->get(moto_auth().data_bucket, "k"); });
  EXPECT_EQ(e.code(), Code::S3_003) << e.what();
  std::string m = e.what();
  EXPECT_EQ(m.find("not-the-secret"), std::string::npos);
  EXPECT_EQ(m.find(moto_auth().data.secret_access_key.reveal()), std::string::npos);
  EXPECT_NE(m.find("s3://sx-data/k"), std::string::npos) << m;
  EXPECT_NE(m.find("403"), std::string::npos) << m;
  EXPECT_EQ(m.find("tries"), std::string::npos) << "a 403 is not retried: " << m;
}

TEST(S3Client, RolesHaveTheirOwnBuckets) {
  SX_REQUIRE_MOTO_AUTH();
  auto data = test_client(moto_auth().data);
  auto ckpt = test_client(moto_auth().checkpoint);
  std::string k = test_prefix() + "/x";
  ckpt->put(moto_auth().checkpoint_bucket, k, "c");
  EXPECT_EQ(error_of([&] { data->get(moto_auth().checkpoint_bucket, k); }).code(), Code::S3_003);
  EXPECT_EQ(error_of([&] { data->put(moto_auth().checkpoint_bucket, k, "d"); }).code(), Code::S3_003);
  EXPECT_EQ(ckpt->get(moto_auth().checkpoint_bucket, k), "c");
}

TEST(S3Client, NoSuchBucket) {
  SX_REQUIRE_MOTO_AUTH();
  Config cfg = config_from(moto_auth().data);
  // With auth on, moto answers 403 for a bucket the key's policy does not cover.
  Client c(cfg);
  auto e = error_of([&] { c.get("sx-no-such-bucket", "k"); });
  EXPECT_TRUE(e.code() == Code::S3_004 || e.code() == Code::S3_003) << e.what();
  EXPECT_NE(std::string(e.what()).find("sx-no-such-bucket"), std::string::npos);
}

TEST(S3Client, NoSuchBucketWithoutAuth) {
  SX_REQUIRE_MOTO();
  auto c = test_client(moto().data);
  EXPECT_EQ(error_of([&] { c->get("sx-no-such-bucket", "k"); }).code(), Code::S3_004);
  EXPECT_EQ(error_of([&] { c->list("sx-no-such-bucket", "k/"); }).code(), Code::S3_004);
  EXPECT_EQ(error_of([&] { c->put("sx-no-such-bucket", "k", "x"); }).code(), Code::S3_004);
}

TEST(S3Client, ConnectionRefusedIsRetriedThenFails) {
  S3Credentials creds = testing::credentials(S3Role::checkpoint, "http://127.0.0.1:1", "k", "s");
  Config cfg = config_from(creds);
  cfg.max_attempts = 3;
  cfg.backoff_base_ms = 1;
  Client c(cfg);
  auto e = error_of([&] { c.put("b", "k", "x"); });
  EXPECT_EQ(e.code(), Code::S3_001);
  std::string m = e.what();
  EXPECT_NE(m.find("after 3 tries"), std::string::npos) << m;
  EXPECT_NE(m.find("checkpoint role"), std::string::npos) << m;
}

// Cancels `c`'s request after `after`; the request must end as cancelled long
// before its retries (or its 30 s stall timeout) would have ended it.
void expect_cancelled(Config cfg, std::chrono::milliseconds after) {
  std::atomic<bool> cancel{false};
  cfg.cancel = &cancel;
  Client c(cfg);
  std::thread t([&] { std::this_thread::sleep_for(after), cancel = true; });
  auto start = std::chrono::steady_clock::now();
  auto e = error_of([&] { c.get("b", "k"); });
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  t.join();
  EXPECT_EQ(e.code(), Code::S3_001);
  EXPECT_NE(std::string(e.what()).find("cancelled"), std::string::npos) << e.what();
  EXPECT_LT(seconds, 10.0);
}

TEST(S3Client, CancelEndsTheBackoff) {
  Config cfg = config_from(testing::credentials(S3Role::data, "http://127.0.0.1:1", "k", "s"));
  cfg.backoff_base_ms = 5'000;  // each backoff alone would be seconds
  cfg.backoff_max_ms = 60'000;
  expect_cancelled(cfg, std::chrono::milliseconds(100));
}

TEST(S3Client, CancelAbandonsARequestInFlight) {
  // A server that accepts connections (the kernel's backlog does) and never answers.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  std::string endpoint = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  expect_cancelled(config_from(testing::credentials(S3Role::data, endpoint, "k", "s")), std::chrono::milliseconds(300));
  ::close(fd);
}

TEST(S3Client, MissingCredentialsNameTheVariable) {
  set_credentials(S3Credentials{S3Role::data, {}, {}, {}, {}, {}});
  auto e = error_of([] { client_for(S3Role::data, "the data source s3://b/k"); });
  EXPECT_EQ(e.code(), Code::ENV_002);
  ASSERT_FALSE(e.first().notes.empty());
  EXPECT_NE(e.first().notes[0].find("SEXPGPU_DATA_AWS_ACCESS_KEY_ID"), std::string::npos) << e.first().notes[0];
}

}  // namespace
}  // namespace sx::s3
