// Every way a checkpoint folder can be damaged is refused with its code,
// naming the file, and never crashes.
#include <gtest/gtest.h>

#include "checkpoint/checkpoint.h"
#include "checkpoint/checkpoint_test_util.h"

namespace sx::ckpt {
namespace {

using namespace testing;

class Corruption : public ::testing::Test {
 protected:
  void SetUp() override { dir = write_checkpoint(tmp.location(), "r", sample(7)).path; }
  std::string code() {
    return code_of([&] { read_checkpoint(dir); });
  }
  std::string message() {
    return message_of([&] { read_checkpoint(dir); });
  }
  TempDir tmp;
  std::string dir;
};

TEST_F(Corruption, MissingFolder) {
  dir = tmp.path() + "/r/step-8";
  EXPECT_EQ(code(), "E-CKPT-021");
  EXPECT_NE(message().find(dir), std::string::npos);
  dir = tmp.path() + "/r/step-7/state.json";  // a file, not a folder
  EXPECT_EQ(code(), "E-CKPT-021");
}

TEST_F(Corruption, MissingComplete) {
  fs::remove(dir + "/COMPLETE");
  EXPECT_EQ(code(), "E-CKPT-022");
  EXPECT_NE(message().find("COMPLETE"), std::string::npos);
}

TEST_F(Corruption, CompleteNotOurs) {
  spit(dir + "/COMPLETE", "done\n");
  EXPECT_EQ(code(), "E-CKPT-022");
}

TEST_F(Corruption, TruncatedTensorFile) {
  std::string model = slurp(dir + "/model.safetensors");
  spit(dir + "/model.safetensors", model.substr(0, model.size() - 5));
  EXPECT_EQ(code(), "E-CKPT-023");
  EXPECT_NE(message().find("model.safetensors"), std::string::npos);
}

TEST_F(Corruption, OneFlippedByte) {
  std::string opt = slurp(dir + "/optimizer.safetensors");
  opt[opt.size() - 1] ^= 0x01;  // in the data: the header would still parse
  spit(dir + "/optimizer.safetensors", opt);
  EXPECT_EQ(code(), "E-CKPT-023");
  EXPECT_NE(message().find("optimizer.safetensors"), std::string::npos);
}

TEST_F(Corruption, MissingTensorFile) {
  fs::remove(dir + "/model.safetensors");
  EXPECT_EQ(code(), "E-CKPT-023");
}

TEST_F(Corruption, GarbledStateJsonFailsItsHash) {
  std::string state = slurp(dir + "/state.json");
  state[state.size() / 2] ^= 0x20;
  spit(dir + "/state.json", state);
  EXPECT_EQ(code(), "E-CKPT-023");
  fs::remove(dir + "/state.json");
  EXPECT_EQ(code(), "E-CKPT-023");
}

TEST_F(Corruption, StateJsonNotJson) {
  rewrite_state(dir, "{\"step\": 7, \"files\": ");
  EXPECT_EQ(code(), "E-CKPT-024");
  EXPECT_NE(message().find("state.json"), std::string::npos);
}

TEST_F(Corruption, WrongHashInState) {
  auto state = nlohmann::ordered_json::parse(slurp(dir + "/state.json"));
  state["files"]["model.safetensors"] = std::string(64, 'a');
  rewrite_state(dir, state.dump());
  EXPECT_EQ(code(), "E-CKPT-023");
  EXPECT_NE(message().find(std::string(64, 'a')), std::string::npos);
}

TEST_F(Corruption, StepDisagreesWithFolder) {
  fs::rename(dir, tmp.path() + "/r/step-6");
  dir = tmp.path() + "/r/step-6";
  EXPECT_EQ(code(), "E-CKPT-025");
  // A folder with another name is not checked against the step.
  fs::rename(dir, tmp.path() + "/r/best");
  dir = tmp.path() + "/r/best";
  EXPECT_EQ(read_checkpoint(dir).step, 7);
}

TEST_F(Corruption, HashesRightButNotSafetensors) {
  spit(dir + "/model.safetensors", "not a safetensors file");
  auto state = nlohmann::ordered_json::parse(slurp(dir + "/state.json"));
  state["files"]["model.safetensors"] = sha256_hex("not a safetensors file");
  rewrite_state(dir, state.dump());
  std::string c = code();
  EXPECT_TRUE(c.starts_with("E-CKPT-00")) << c;
}

TEST_F(Corruption, FileNamesStayInsideTheFolder) {
  auto state = nlohmann::ordered_json::parse(slurp(dir + "/state.json"));
  state["files"]["../../r/step-7/state.json"] = std::string(64, '0');
  rewrite_state(dir, state.dump());
  EXPECT_EQ(code(), "E-CKPT-024");
}

// state.json's own checks, without a folder.
TEST(State, FieldsAndTypes) {
  std::string h(64, '0');
  std::string files =
      R"("files": {"model.safetensors": ")" + h + R"(", "optimizer.safetensors": ")" + h + "\"}";
  auto ok = parse_state("{\"step\": 3, " + files + "}", "s");
  EXPECT_EQ(ok["step"], 3);
  auto code = [](const std::string& text) { return code_of([&] { parse_state(text, "state.json"); }); };
  for (std::string bad : {
           std::string(""),
           std::string("null"),
           std::string("[1, 2]"),
           std::string("\"step\""),
           "{" + files + "}",                                  // no step
           "{\"step\": \"3\", " + files + "}",                 // a string
           "{\"step\": -1, " + files + "}",                    // negative
           "{\"step\": 1.5, " + files + "}",                   // not an integer
           "{\"step\": 18446744073709551615, " + files + "}",  // past int64
           std::string("{\"step\": 3}"),                       // no files
           std::string("{\"step\": 3, \"files\": []}"),        // files not an object
           std::string("{\"step\": 3, \"files\": {}}"),        // neither tensor file
           "{\"step\": 3, \"files\": {\"model.safetensors\": \"" + h + "\"}}",
           "{\"step\": 3, \"files\": {\"model.safetensors\": 5, "
           "\"optimizer.safetensors\": \"" +
               h + "\"}}",
           "{\"step\": 3, \"files\": {\"model.safetensors\": \"ABC\", "
           "\"optimizer.safetensors\": \"" +
               h + "\"}}",
           std::string(100000, '['),
           std::string("{\"step\": 3, \xff}"),
       })
    EXPECT_EQ(code(bad), "E-CKPT-024") << bad.substr(0, 80);
}

}  // namespace
}  // namespace sx::ckpt
