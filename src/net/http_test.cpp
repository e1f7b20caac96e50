#include "net/http.h"

#include <gtest/gtest.h>

namespace sx::net {
namespace {

TEST(Backoff, TwentyPercentJitterDoublesToItsCap) {
  Backoff b{500, 30'000, Backoff::Jitter::twenty_percent};
  for (int i = 0; i < 50; ++i) {
    long first = b.delay(1).count(), third = b.delay(3).count(), late = b.delay(20).count();
    EXPECT_GE(first, 400);
    EXPECT_LE(first, 600);
    EXPECT_GE(third, 1600);
    EXPECT_LE(third, 2400);
    EXPECT_GE(late, 24'000);
    EXPECT_LE(late, 36'000);
  }
}

TEST(Backoff, FullJitterStaysUnderItsCap) {
  Backoff b{100, 10'000, Backoff::Jitter::full};
  for (int i = 0; i < 50; ++i) {
    EXPECT_LE(b.delay(1).count(), 200);
    EXPECT_LE(b.delay(30).count(), 10'000);
  }
}

TEST(Backoff, RetryAfterIsAFloorUpToTheCap) {
  Backoff b{500, 30'000, Backoff::Jitter::twenty_percent};
  HttpResponse busy;
  busy.status = 503;
  busy.headers["retry-after"] = "7";
  EXPECT_GE(b.delay(1, &busy).count(), 7'000);
  busy.headers["retry-after"] = "3600";
  EXPECT_EQ(b.delay(1, &busy).count(), 30'000);
  busy.headers["retry-after"] = "Wed, 21 Oct 2026 07:28:00 GMT";  // the date form: not used
  EXPECT_LE(b.delay(1, &busy).count(), 600);
  EXPECT_EQ(retry_after_ms(busy), std::nullopt);
}

TEST(Http, SleepUnlessCancelledEndsEarly) {
  std::atomic<bool> cancel{true};
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(sleep_unless_cancelled(std::chrono::seconds(5), &cancel));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  EXPECT_TRUE(sleep_unless_cancelled(std::chrono::milliseconds(1), nullptr));
}

TEST(Http, CurlTextLosesTheConnectTime) {
  EXPECT_EQ(without_elapsed_ms("Failed to connect to 127.0.0.1 port 9 after 2 ms: Couldn't connect to server"),
            "Failed to connect to 127.0.0.1 port 9: Couldn't connect to server");
  EXPECT_EQ(without_elapsed_ms("Failed to connect to h port 9 after 10001 ms"), "Failed to connect to h port 9");
  // Other times say what was configured, and stay.
  EXPECT_EQ(without_elapsed_ms("Connection timed out after 5001 milliseconds"),
            "Connection timed out after 5001 milliseconds");
  EXPECT_EQ(without_elapsed_ms("stalled after 3 ms of 9"), "stalled after 3 ms of 9");
  EXPECT_EQ(without_elapsed_ms("after x ms:"), "after x ms:");
}

TEST(Http, PercentEncode) {
  EXPECT_EQ(percent_encode("my-run-lr=0.01/x y", false), "my-run-lr%3D0.01%2Fx%20y");
  EXPECT_EQ(percent_encode("a/b", true), "a/b");
}

}  // namespace
}  // namespace sx::net
