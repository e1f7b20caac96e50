// The session's parts on their own: the run's state as state.json writes it,
// the local communicator, and the metrics sink over its targets.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "checkpoint/resume_state.h"
#include "runtime/communicator.h"
#include "runtime/records.h"
#include "runtime/run_state.h"

namespace sx {
namespace {

RunState some_state() {
  RunState s;
  s.step = 12;
  s.stage = 1;
  s.records = 96;
  s.tokens = 3168;
  s.train_loss = 2.5f;
  s.loader = "train";
  s.positions = {{"train", {{"epoch", 0}, {"index", 96}}}};
  s.pending_passes = {"probe"};
  s.set_last_eval("eval/loss", 2.75);
  s.set_last_eval("probe:eval/loss", 3.0);
  s.set_last_eval("eval/loss", 2.5);  // replaces, keeps its place
  return s;
}

TEST(RunState, StateJsonHasTodaysFieldsInTheirOrder) {
  StateIdentity id{7, 2, Json::array({"a"}), Json{{"kind", "adamw"}}, "my-run", "abc"};
  Json j = some_state().to_state_json(id, Json{{"train", "unused"}});
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"step", "counters", "stage", "loader", "loaders", "rng", "passes_due",
                                            "train_loss", "eval", "threads", "knobs", "slug", "graph", "optimizer",
                                            "version", "written_at"}));
  EXPECT_EQ(j["counters"].dump(), R"({"records":96,"tokens":3168})");
  EXPECT_EQ(j["loaders"]["train"]["index"], 96);  // the positions after the step, not the current ones
  EXPECT_EQ(j["rng"].dump(), R"({"generator":"philox4x32-10","seed":7,"dropout_offset":"step << 16 | microbatch"})");
  EXPECT_EQ(j["passes_due"].dump(), R"(["probe"])");
  EXPECT_EQ(j["train_loss"], 2.5);
  EXPECT_EQ(j["eval"].dump(), R"({"eval/loss":2.5,"probe:eval/loss":3.0})");
  EXPECT_EQ(j["threads"], 2);
  EXPECT_EQ(j["slug"], "my-run");
}

TEST(RunState, BeforeAnyStepTheLossIsNullAndThePositionsAreTheCurrentOnes) {
  RunState s;
  Json j = s.to_state_json({}, Json{{"train", {{"index", 0}}}});
  EXPECT_TRUE(j["train_loss"].is_null());
  EXPECT_EQ(j["loaders"]["train"]["index"], 0);
}

TEST(RunState, RestoreTakesTheCountersStageLoaderAndEvals) {
  ckpt::ResumeState saved;
  saved.records = 40;
  saved.tokens = 400;
  saved.stage = 2;
  saved.loader = "late";
  saved.train_loss = 1.25f;
  saved.eval = {{"eval/loss", 1.5}};
  RunState s;
  s.restore(saved, 10);
  EXPECT_EQ(s.step, 10);
  EXPECT_EQ(s.first_step, 10);
  EXPECT_EQ(s.records, 40);
  EXPECT_EQ(s.tokens, 400);
  EXPECT_EQ(s.stage, 2);
  EXPECT_EQ(s.loader, "late");
  EXPECT_FLOAT_EQ(s.train_loss, 1.25f);
  EXPECT_EQ(s.eval_json().dump(), R"({"eval/loss":1.5})");
}

TEST(Communicator, TheLocalOneIsRankZeroOfOneAndLeads) {
  auto c = make_local_communicator();
  EXPECT_EQ(c->rank(), 0);
  EXPECT_EQ(c->size(), 1);
  EXPECT_TRUE(c->leads());
  float x[3] = {1.0f, -2.0f, 0.5f};
  c->all_reduce_sum(x, 3);  // the sum over one rank is its own values
  EXPECT_EQ(x[0], 1.0f);
  EXPECT_EQ(x[1], -2.0f);
  EXPECT_EQ(x[2], 0.5f);
  c->broadcast(x, sizeof x, 0);
  EXPECT_EQ(x[1], -2.0f);
  c->barrier();
}

class MetricsSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("sx-metrics-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::optional<MetricsTargetConfig> jsonl(const std::string& name) {
    MetricsTargetConfig t;
    t.kind = MetricsTargetConfig::Kind::jsonl;
    t.path = (dir_ / name).string();
    return t;
  }
  std::filesystem::path dir_;
};

TEST_F(MetricsSinkTest, JsonlAppendsWholeLinesAndNamesItsFile) {
  { std::ofstream(dir_ / "m.jsonl") << "{\"kind\":\"old\"}\n"; }
  MetricsSink sink(jsonl("m.jsonl"));
  ASSERT_TRUE(sink.enabled());
  sink.write({{"kind", "step"}, {"step", 1}});
  sink.write({{"kind", "step"}, {"step", 2}});
  std::ifstream in(dir_ / "m.jsonl");
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l.substr(0, l.find_last_not_of(' ') + 1));
  EXPECT_EQ(lines, (std::vector<std::string>{R"({"kind":"old"})", R"({"kind":"step","step":1})",
                                             R"({"kind":"step","step":2})"}));
  std::string abs = std::filesystem::absolute(dir_ / "m.jsonl").lexically_normal().string();
  EXPECT_EQ(sink.describe(), abs);
  EXPECT_EQ(sink.line(), "jsonl:" + abs);
}

TEST_F(MetricsSinkTest, ARemovedFileFailsOnceAndKeepsTheRecord) {
  MetricsSink sink(jsonl("gone.jsonl"));
  std::filesystem::remove(dir_ / "gone.jsonl");
  Json rec = {{"kind", "step"}, {"step", 3}};
  try {
    sink.write(rec);
    FAIL() << "expected E-METRICS-011";
  } catch (const MetricsWriteError& e) {
    EXPECT_EQ(e.code(), Code::METRICS_011);
    EXPECT_NE(e.diagnostics()[0].message.find("the step record of step 3"), std::string::npos);
  }
  EXPECT_TRUE(sink.failed());
  EXPECT_EQ(sink.unwritten(), rec);
  sink.write({{"kind", "summary"}});  // dropped, not thrown again
}

TEST_F(MetricsSinkTest, AFolderThatDoesNotExistIsRefusedBeforeTheRun) {
  try {
    MetricsSink sink(jsonl("no/such/folder/m.jsonl"));
    FAIL() << "expected E-METRICS-001";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), Code::METRICS_001);
  }
}

TEST(MetricsSink, StdoutAndNone) {
  MetricsTargetConfig t;
  t.kind = MetricsTargetConfig::Kind::standard_output;
  MetricsSink out(t);
  EXPECT_EQ(out.line(), "stdout");
  EXPECT_EQ(out.describe(), "stdout");
  MetricsSink none(std::nullopt);
  EXPECT_FALSE(none.enabled());
  EXPECT_TRUE(none.describe().is_null());
  none.write({{"kind", "step"}});  // nothing, no error
}

}  // namespace
}  // namespace sx
