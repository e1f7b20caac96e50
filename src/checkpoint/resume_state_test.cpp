// check_resume_state: each kind of bad field refused with E-CKPT-053 naming
// it, and many random mutations of a real state answered by a refusal or a
// result, never another exception.
#include "checkpoint/resume_state.h"

#include <gtest/gtest.h>

#include <random>

#include "util/error.h"

namespace sx::ckpt {
namespace {

using Json = nlohmann::ordered_json;

Json position(const std::string& loader) {
  return {{"loader", loader}, {"seed", 5},   {"shuffle", true},  {"windows", 40},
          {"epoch", 1},       {"index", 12}, {"shard", "a.txt"}, {"offset", 96}};
}

// A state.json as the session writes it (resume.sx: two loaders, two passes, three stages).
Json good_state() {
  return {{"step", 9},
          {"counters", {{"records", 72}, {"tokens", 648}}},
          {"stage", 1},
          {"loader", "train-b"},
          {"loaders", {{"train", position("train")}, {"train-b", position("train-b")}}},
          {"rng", {{"generator", "philox4x32-10"}, {"seed", 5}}},
          {"passes_due", {"probe"}},
          {"train_loss", 3.25},
          {"eval", {{"eval/loss", 3.3}, {"probe:eval/loss", 3.4}}},
          {"threads", 2},
          {"knobs", Json::array({{{"name", "lr"}, {"value", 0.01}}})},
          {"slug", "resume"},
          {"graph", "abc123"},
          {"optimizer", {{"kind", "adamw"}}},
          {"files", Json::object()}};
}

ResumeExpectations expectations() { return {{"train", "train-b"}, {"eval", "probe"}, 3}; }

// The refusal for `state`, or a failure when it is accepted.
UserError refusal(const Json& state) {
  try {
    check_resume_state(state, expectations(), "ckpt/resume/step-9/state.json");
  } catch (const UserError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << state.dump();
  return UserError(Code::CKPT_053, {}, "accepted");
}

void expect_refused(const Json& state, const std::string& field) {
  UserError e = refusal(state);
  EXPECT_EQ(e.code(), Code::CKPT_053) << e.what();
  std::string msg = e.diagnostics().front().message;
  EXPECT_NE(msg.find("expected " + field + " "), std::string::npos) << msg;
  EXPECT_NE(msg.find("ckpt/resume/step-9/state.json"), std::string::npos) << msg;
}

TEST(ResumeState, AGoodStateIsRead) {
  ResumeState r = check_resume_state(good_state(), expectations(), "s");
  EXPECT_EQ(r.step, 9);
  EXPECT_EQ(r.records, 72);
  EXPECT_EQ(r.tokens, 648);
  EXPECT_EQ(r.stage, 1);
  EXPECT_EQ(r.loader, "train-b");
  ASSERT_EQ(r.positions.size(), 2u);
  EXPECT_EQ(r.positions[1].second["index"], 12);
  EXPECT_EQ(r.passes_due, std::vector<std::string>{"probe"});
  EXPECT_EQ(r.train_loss, 3.25f);
  ASSERT_EQ(r.eval.size(), 2u);
}

TEST(ResumeState, TypesAreChecked) {
  Json s = good_state();
  s["threads"] = "x";
  expect_refused(s, "threads");
  s = good_state(), s["counters"]["records"] = "72";
  expect_refused(s, "counters.records");
  s = good_state(), s["counters"]["tokens"] = 6.5;
  expect_refused(s, "counters.tokens");
  s = good_state(), s["stage"] = true;
  expect_refused(s, "stage");
  s = good_state(), s["loader"] = 3;
  expect_refused(s, "loader");
  s = good_state(), s["passes_due"] = "probe";
  expect_refused(s, "passes_due");
  s = good_state(), s["train_loss"] = "low";
  expect_refused(s, "train_loss");
  s = good_state(), s["eval"]["eval/loss"] = Json::array();
  expect_refused(s, "eval.eval/loss");
  s = good_state(), s["graph"] = 7;
  expect_refused(s, "graph");
  s = good_state(), s["knobs"] = Json::array({3});
  expect_refused(s, "knobs[]");
  s = good_state(), s["optimizer"] = 1;
  expect_refused(s, "optimizer");
  s = good_state(), s["loaders"]["train"]["shuffle"] = 1;
  expect_refused(s, "loaders.train.shuffle");
}

TEST(ResumeState, UnwrittenRecordsAreReadAndChecked) {
  Json s = good_state();
  s["unwritten_records"] = Json::array({{{"kind", "step"}, {"step", 9}}});
  ResumeState r = check_resume_state(s, expectations(), "s");
  ASSERT_EQ(r.unwritten.size(), 1u);
  EXPECT_EQ(r.unwritten[0]["step"], 9);
  EXPECT_TRUE(check_resume_state(good_state(), expectations(), "s").unwritten.empty());
  s["unwritten_records"] = "step";
  expect_refused(s, "unwritten_records");
  s["unwritten_records"] = Json::array({3});
  expect_refused(s, "unwritten_records[]");
  s["unwritten_records"] = Json::array({{{"step", 9}}});
  expect_refused(s, "unwritten_records[].kind");
}

TEST(ResumeState, RangesAreChecked) {
  Json s = good_state();
  s["counters"]["records"] = -1;
  expect_refused(s, "counters.records");
  s = good_state(), s["counters"]["tokens"] = uint64_t{1} << 63;
  expect_refused(s, "counters.tokens");
  s = good_state(), s["stage"] = 3;  // stages 0, 1, 2
  expect_refused(s, "stage");
  s = good_state(), s["stage"] = -1;
  expect_refused(s, "stage");
  s = good_state(), s["loader"] = "valid";
  expect_refused(s, "loader");
  s = good_state(), s["passes_due"] = {"probe", "probe"};
  expect_refused(s, "passes_due");
  s = good_state(), s["passes_due"] = {"nope", "eval"};  // a pass since removed from the file is not due
  EXPECT_EQ(check_resume_state(s, expectations(), "s").passes_due, std::vector<std::string>{"eval"});
  s = good_state(), s["loaders"]["train"]["index"] = 40;
  expect_refused(s, "loaders.train.index");
  s = good_state(), s["loaders"]["train"]["epoch"] = int64_t{1} << 60;
  expect_refused(s, "loaders.train.epoch");
  s = good_state(), s["loaders"]["train"]["loader"] = "train-b";
  expect_refused(s, "loaders.train.loader");
  s = good_state(), s["threads"] = 0;
  expect_refused(s, "threads");
  s = good_state(), s["train_loss"] = 1e300;
  expect_refused(s, "train_loss");
  // As read from a file, a non-negative number is unsigned: the lower bound
  // holds for it too (a zero count of windows was once accepted and divided by).
  s = good_state(), s["loaders"]["train"]["windows"] = Json::parse("0");
  ASSERT_TRUE(s["loaders"]["train"]["windows"].is_number_unsigned());
  expect_refused(s, "loaders.train.windows");
  s = good_state(), s["threads"] = Json::parse("0");
  expect_refused(s, "threads");
}

TEST(ResumeState, PresenceIsChecked) {
  for (const char* field : {"counters", "stage", "loader", "loaders", "passes_due", "train_loss", "eval"}) {
    Json s = good_state();
    s.erase(field);
    expect_refused(s, field);
  }
  Json s = good_state();
  s["loaders"].erase("train");  // a loader that would silently restart from its beginning
  expect_refused(s, "loaders.train");
  s = good_state(), s["loaders"]["train-b"].erase("index");
  expect_refused(s, "loaders.train-b.index");
  s = good_state(), s["train_loss"] = nullptr;  // after step 0 there is a loss
  expect_refused(s, "train_loss");
  s = good_state(), s["step"] = 0, s["train_loss"] = nullptr;
  EXPECT_FALSE(check_resume_state(s, expectations(), "s").train_loss.has_value());
}

// A random edit of one value somewhere in the tree: another type, an extreme
// number, a deletion, a duplicate.
void mutate(Json& j, std::mt19937& rng) {
  std::vector<Json*> nodes;
  std::vector<std::pair<Json*, std::string>> members;
  auto walk = [&](auto&& self, Json& v) -> void {
    nodes.push_back(&v);
    if (v.is_object())
      for (auto& [k, c] : v.items()) members.emplace_back(&v, k), self(self, c);
    if (v.is_array())
      for (auto& c : v) self(self, c);
  };
  walk(walk, j);
  static const Json replacements[] = {"x",
                                      -1,
                                      0,
                                      1,
                                      1.5,
                                      -1e300,
                                      uint64_t{1} << 63,
                                      INT64_MIN,
                                      true,
                                      nullptr,
                                      Json::array(),
                                      Json::object(),
                                      Json::array({"eval", "eval"}),
                                      "train",
                                      "probe",
                                      1e20};
  std::uniform_int_distribution<int> pick(0, 3);
  switch (pick(rng)) {
    case 0:
    case 1: {
      Json* n = nodes[std::uniform_int_distribution<size_t>(1, nodes.size() - 1)(rng)];
      *n = replacements[std::uniform_int_distribution<size_t>(0, std::size(replacements) - 1)(rng)];
      break;
    }
    case 2: {
      auto [obj, key] = members[std::uniform_int_distribution<size_t>(0, members.size() - 1)(rng)];
      obj->erase(key);
      break;
    }
    default: {
      Json* n = nodes[std::uniform_int_distribution<size_t>(0, nodes.size() - 1)(rng)];
      if (n->is_array()) n->push_back(n->empty() ? Json("probe") : Json(n->back()));
      break;
    }
  }
}

TEST(ResumeState, RandomMutationsAreRefusedOrRead) {
  std::mt19937 rng(12);
  int refused = 0, read = 0;
  for (int i = 0; i < 3000; ++i) {
    Json s = good_state();
    for (int k = 1 + i % 3; k > 0; --k) mutate(s, rng);
    try {
      check_resume_state(s, expectations(), "s");
      ++read;
    } catch (const UserError& e) {
      ASSERT_EQ(e.code(), Code::CKPT_053) << e.what();
      ++refused;
    }
  }
  EXPECT_GT(refused, 1000);
  EXPECT_GT(read, 10);
}

}  // namespace
}  // namespace sx::ckpt
