#include "cli/watch_view.h"

#include <gtest/gtest.h>

namespace sx::watch {
namespace {

TEST(Watch, StatusFile) {
  auto s = nlohmann::json::parse(R"({"kind":"status","state":"running","slug":"my-run","device":"cpu","step":10,
    "steps":20,"train_loss":2.5,"eval":{"eval/loss":2.25},"counters":{"records":80,"tokens":1360},
    "steps_per_s":4.0,"eta_s":2.5,"updated_at":"2026-12-01T10:00:00Z"})");
  View v = from_status(s, {3.0, 2.5});
  EXPECT_EQ(v.step, 10);
  EXPECT_DOUBLE_EQ(*v.tokens_per_s, 4.0 * 136);
  auto lines = render(v, 80);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "my-run  running  step 10/20 (50%)  cpu");
  EXPECT_EQ(lines[1], "train/loss 2.50000  eval/loss 2.25000");
  EXPECT_EQ(lines[2], "loss █▁ (last 2 steps)");
  EXPECT_EQ(lines[3], "544 tokens/s  ETA 0:03  updated 2026-12-01T10:00:00Z");
  EXPECT_FALSE(v.ended());
}

TEST(Watch, JsonlLatestSegmentWins) {
  std::string text =
      R"({"kind":"meta","slug":"r","device":"cpu","knobs":[{"name":"steps","value":4,"source":"default"}]})"
      "\n"
      R"({"kind":"step","step":1,"train/loss":3.0,"tokens":10,"step_s":0.5})"
      "\n"
      R"({"kind":"step","step":2,"train/loss":2.0,"tokens":20,"step_s":0.5})"
      "\n"
      R"({"kind":"step","step":3,"train/loss":9.0,"tokens":30,"step_s":0.5})"
      "\n"
      R"({"kind":"meta","slug":"r","device":"cpu","knobs":[{"name":"steps","value":4,"source":"default"}]})"
      "\n"
      R"({"kind":"step","step":3,"train/loss":1.5,"tokens":30,"step_s":0.5})"
      "\n"
      R"({"kind":"eval","pass":"probe","step":3,"eval/loss":1.25})"
      "\n"
      R"({"kind":"step","step":4,"train/loss":1.0,"tok)";  // a line being written
  View v = from_jsonl(text);
  EXPECT_EQ(v.step, 3);
  EXPECT_EQ(v.losses, (std::vector<double>{3.0, 2.0, 1.5}));
  EXPECT_DOUBLE_EQ(*v.tokens_per_s, 20.0);
  EXPECT_DOUBLE_EQ(*v.eta_s, 0.5);
  EXPECT_EQ(v.evals.at("probe:eval/loss"), 1.25);
  EXPECT_EQ(v.state, "running");
  v = from_jsonl(text.substr(0, text.rfind('\n') + 1) + R"({"kind":"summary","state":"stopped"})"
                                                        "\n");
  EXPECT_TRUE(v.ended());
  EXPECT_EQ(v.state, "stopped");
}

TEST(Watch, NoInputForgesTheTerminal) {
  auto s = nlohmann::json::parse(R"({"kind":"status","state":"running\u001b[2J","slug":"a\nb\u001b]0;x\u0007"})");
  for (const auto& line : render(from_status(s, {}), 80)) {
    EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  }
}

TEST(Watch, Sparkline) {
  EXPECT_EQ(sparkline({}, 10), "");
  EXPECT_EQ(sparkline({1, 2, 3, 4, 5, 6, 7, 8}, 10), "▁▂▃▄▅▆▇█");
  EXPECT_EQ(sparkline({5, 1, 2}, 2), "▁█");  // the most recent `width`: 1, 2
  EXPECT_EQ(sparkline({2, 2}, 5), "▄▄");
}

}  // namespace
}  // namespace sx::watch
