// The fuzz_bpe entry point in the ordinary build: its seeds, and malformed
// tokenizer.json files that must be coded errors (regressions from fuzzing).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "data/bpe.h"
#include "data/fuzz.h"
#include "data/test_util.h"

namespace sx::data {
namespace {

int run(std::string_view bytes) { return fuzz_bpe(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()); }

std::string seed_dir() {
  const char* root = std::getenv("SEXPGPU_SOURCE_DIR");
  return std::string(root ? root : SEXPGPU_SOURCE_DIR_DEFAULT) + "/fuzz/seeds/fuzz_bpe";
}

TEST(FuzzBpe, SeedsRunAndTheSeedTokenizersParse) {
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(seed_dir())) {
    std::ifstream f(e.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(f)), {});
    ASSERT_FALSE(bytes.empty()) << e.path();
    EXPECT_EQ(run(bytes), 0) << e.path();
    if (bytes[0] & 1) {
      EXPECT_GT(BpeTokenizer::parse(bytes.substr(1), e.path())->vocab(), 256) << e.path();
    }
    ++files;
  }
  EXPECT_GE(files, 4);
}

TEST(FuzzBpe, MalformedFilesAreCodedErrors) {
  // Each is read as a tokenizer.json: a UserError with E-DATA-050/051, never anything else.
  const char* files[] = {
      "",
      "null",
      "{}",
      R"({"model": null})",
      R"({"model": {"type": "BPE", "vocab": [], "merges": []}})",
      R"({"model": {"type": "BPE", "vocab": {"a": -1}, "merges": []}})",
      R"({"model": {"type": "BPE", "vocab": {"a": 1e300}, "merges": []}})",
      R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [1]}})",
      R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [["a"]]}})",
      R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a"]}, "added_tokens": [{"id": "x"}]})",
      R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "added_tokens": [{"id": 3, "content": ""}]})",
      R"({"normalizer": {"type": "Sequence", "normalizers": 5}, "model": {"type": "BPE"}})",
      R"({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split"}]}, "model": {}})",
      R"({"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "\\"}}, "model": {}})",
  };
  for (const char* f : files) {
    SCOPED_TRACE(f);
    EXPECT_EQ(run(std::string("\x01") + f), 0);
    auto e = testing::error_of([&] { BpeTokenizer::parse(f, "tok.json"); });
    EXPECT_TRUE(e.code() == Code::DATA_050 || e.code() == Code::DATA_051) << e.what();
    EXPECT_NE(std::string(e.what()).find("tok.json"), std::string::npos) << e.what();
  }
}

TEST(FuzzBpe, TextsRunThroughTheBuiltInTokenizers) {
  for (std::string_view text :
       {"", "a", " ", "<|endoftext|><|x|>", "\xcc\x81\xcc\x81", "\xef\xbb\xbf\r\n\r\n  x", "\xff not utf-8"})
    EXPECT_EQ(run(std::string("\x00", 1) + std::string(text)), 0);
}

// Found by fuzz_bpe: a Split whose pattern is {"String": ...} did not compile
// (PCRE2_LITERAL with PCRE2_UCP), so every such file was refused.
TEST(FuzzBpe, ASplitOnAStringSplitsThere) {
  std::ifstream f(seed_dir() + "/tiny.json", std::ios::binary);
  auto j = nlohmann::json::parse(std::string((std::istreambuf_iterator<char>(f)), {}).substr(1));
  auto ids = [&](const nlohmann::json& file) {
    std::vector<int32_t> out;
    BpeTokenizer::parse(file.dump(), "tok.json")->encode("the", out);
    return out;
  };
  EXPECT_EQ(ids(j), (std::vector<int32_t>{257, 'e'}));  // "th" merged; the seed's other ids are the bytes
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers",
                         {{{"type", "Split"}, {"pattern", {{"String", "h"}}}, {"behavior", "Isolated"}},
                          {{"type", "ByteLevel"}, {"use_regex", false}, {"add_prefix_space", false}}}}};
  EXPECT_EQ(ids(j), (std::vector<int32_t>{'t', 'h', 'e'}));  // split at "h": nothing to merge
}

}  // namespace
}  // namespace sx::data
