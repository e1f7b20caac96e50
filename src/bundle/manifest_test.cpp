#include "bundle/manifest.h"

#include <gtest/gtest.h>

#include "util/error.h"
#include "util/sha256.h"

namespace sx::bundle {
namespace {

Manifest sample() {
  Manifest m;
  m.made_by = "0.1.0";
  m.experiment = "run.sx";
  m.folder = "exp";
  m.slug = "run-lr=0.1";
  m.selection.variant = "short";
  m.selection.sets = {{"lr", "0.1"}};
  m.selection.steps = 4;
  std::string h = sha256_hex("x");
  m.files = {{"../lib/m.sx", member_name("../lib/m.sx"), "source", 1, h},
             {"run.sx", "files/run.sx", "experiment", 1, h}};
  m.references = {{"data/t.txt", 1, h}};
  m.s3 = {{"s3://b/k", 5, "\"e\""}};
  return m;
}

Code code_of(const std::string& text) {
  try {
    parse_manifest(text, "b.sxb");
  } catch (const UserError& e) {
    return e.code();
  }
  return Code::CLI_001;  // accepted
}

TEST(BundleManifest, RoundTrips) {
  Manifest m = sample();
  Manifest back = parse_manifest(to_json(m), "b.sxb");
  EXPECT_EQ(to_json(back), to_json(m));
  EXPECT_EQ(back.selection.sets, m.selection.sets);
  EXPECT_EQ(back.selection.steps, 4);
  EXPECT_FALSE(back.selection.eval_every);
  EXPECT_EQ(back.files[0].member, "files/_up/lib/m.sx");
}

TEST(BundleManifest, PathsStayInside) {
  EXPECT_TRUE(safe_relative("a/b.txt"));
  EXPECT_TRUE(safe_relative("../a", 1));
  EXPECT_FALSE(safe_relative("../a"));
  EXPECT_FALSE(safe_relative("../../a", 1));
  EXPECT_FALSE(safe_relative("a/../../b", 2));  // `..` only before the first name
  EXPECT_FALSE(safe_relative("/etc/passwd"));
  EXPECT_FALSE(safe_relative("a//b"));
  EXPECT_FALSE(safe_relative("a/./b"));
  EXPECT_FALSE(safe_relative(".."));
  EXPECT_FALSE(safe_relative(""));
  EXPECT_FALSE(safe_relative(std::string("a\0b", 3)));
  EXPECT_EQ(leading_ups("../../x/y"), 2u);
}

TEST(BundleManifest, RefusesWhatWouldLeaveItsFolder) {
  std::string good = to_json(sample());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  EXPECT_EQ(code_of(good), Code::CLI_001);
  EXPECT_EQ(code_of(with("\"folder\": \"exp\"", "\"folder\": \"\"")), Code::CLI_045);  // ../lib leaves the root
  EXPECT_EQ(code_of(with("\"path\": \"run.sx\"", "\"path\": \"/run.sx\"")), Code::CLI_045);
  EXPECT_EQ(code_of(with("\"member\": \"files/run.sx\"", "\"member\": \"../run.sx\"")), Code::CLI_045);
  EXPECT_EQ(code_of(with("\"path\": \"data/t.txt\"", "\"path\": \"run.sx\"")), Code::CLI_045);  // twice
  EXPECT_EQ(code_of(with("\"version\": 1", "\"version\": 2")), Code::CLI_043);
  EXPECT_EQ(code_of(with("\"format\": \"sexpgpu-bundle\"", "\"format\": \"zip\"")), Code::CLI_042);
  EXPECT_EQ(code_of(with("\"bytes\": 5", "\"bytes\": -5")), Code::CLI_042);
  EXPECT_EQ(code_of(with("\"kind\": \"experiment\"", "\"kind\": \"source\"")), Code::CLI_042);
  EXPECT_EQ(code_of("[1, 2"), Code::CLI_042);
  EXPECT_EQ(code_of("{\"format\": \"sexpgpu-bundle\", \"version\": 1, \"sexpgpu\": 3}"), Code::CLI_042);
}

TEST(BundleManifest, StreamedSha256IsTheOneShot) {
  Sha256 h;
  h.add("hello ");
  h.add("");
  h.add("world");
  EXPECT_EQ(h.hex(), sha256_hex("hello world"));
}

}  // namespace
}  // namespace sx::bundle
