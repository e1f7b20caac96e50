// The BPE tokenizer against ids made by an independent implementation
// (@lenml/tokenizers, a port of transformers.js; tests/fixtures/bpe/make_fixtures.js),
// and its refusals of malformed or unsupported files.
#include "data/bpe.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "data/bpe_regex.h"
#include "data/formats.h"
#include "data/test_util.h"
#include "util/sha256.h"
#include "util/utf8.h"

namespace sx::data {
namespace {

using testing::error_of;

std::string fixture(const std::string& name) {
  const char* root = std::getenv("SEXPGPU_SOURCE_DIR");
  std::ifstream f(std::string(root ? root : SEXPGPU_SOURCE_DIR_DEFAULT) + "/tests/fixtures/bpe/" + name,
                  std::ios::binary);
  EXPECT_TRUE(f) << name;
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::shared_ptr<const BpeTokenizer> load(const std::string& name) {
  static std::map<std::string, std::shared_ptr<const BpeTokenizer>> loaded;  // 1.3 MB files: read once
  auto& t = loaded[name];
  if (!t) t = BpeTokenizer::parse(fixture(name + ".tokenizer.json"), name);
  return t;
}

std::vector<int32_t> encode(const BpeTokenizer& t, std::string_view text) {
  std::vector<int32_t> out;
  t.encode(text, out);
  return out;
}

// "" when equal, else where the first id differs (not a dump of a million ids).
std::string first_difference(const std::vector<int32_t>& got, const std::vector<int32_t>& want) {
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  if (i == got.size() && i == want.size()) return "";
  auto at = [&](const std::vector<int32_t>& v) { return i < v.size() ? std::to_string(v[i]) : "the end"; };
  return fmt::format("id {} is {}, not {} ({} ids, not {})", i, at(got), at(want), got.size(), want.size());
}

std::string u32le(const std::vector<int32_t>& ids) {
  std::string b(ids.size() * 4, '\0');
  for (size_t i = 0; i < ids.size(); ++i)
    for (int k = 0; k < 4; ++k) b[4 * i + k] = static_cast<char>((uint32_t(ids[i]) >> (8 * k)) & 0xFF);
  return b;
}

class Reference : public ::testing::TestWithParam<std::string> {};

TEST_P(Reference, EdgeCasesGiveTheReferenceIds) {
  auto t = load(GetParam());
  auto ref = nlohmann::json::parse(fixture(GetParam() + ".ids.json"));
  ASSERT_GE(ref["edge_cases"].size(), 40u);
  for (const auto& c : ref["edge_cases"]) {
    std::string text = c["text"];
    EXPECT_EQ(encode(*t, text), c["ids"].get<std::vector<int32_t>>()) << nlohmann::json(text).dump();
  }
}

TEST_P(Reference, MegabyteCorpusGivesTheReferenceIds) {
  auto t = load(GetParam());
  auto ref = nlohmann::json::parse(fixture(GetParam() + ".ids.json"))["corpus"];
  std::string corpus = fixture("corpus.txt");
  ASSERT_GE(corpus.size(), 1u << 20);
  std::vector<int32_t> ids = encode(*t, corpus);
  auto prefix = ref["prefix"].get<std::vector<int32_t>>();
  ASSERT_GE(ids.size(), prefix.size());
  EXPECT_EQ(std::vector<int32_t>(ids.begin(), ids.begin() + prefix.size()), prefix);
  EXPECT_EQ(static_cast<int64_t>(ids.size()), ref["tokens"].get<int64_t>());
  EXPECT_EQ(sha256_hex(u32le(ids)), ref["sha256_u32le"].get<std::string>());
}

INSTANTIATE_TEST_SUITE_P(Bpe, Reference, ::testing::Values("gpt2", "gpt2-nfkc"),
                         [](const auto& info) { return info.param == "gpt2" ? "Gpt2" : "Gpt2Nfkc"; });

TEST(Bpe, VocabIsTheFilesSize) {
  EXPECT_EQ(load("gpt2")->vocab(), 50257);
  EXPECT_EQ(load("gpt2-nfkc")->vocab(), 50258);
}

TEST(Bpe, SpecialTokenIsSplitOutBeforePreTokenizing) {
  auto t = load("gpt2");
  EXPECT_EQ(encode(*t, "<|endoftext|>"), (std::vector<int32_t>{50256}));
  auto ids = encode(*t, "a<|endoftext|>b");
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids[1], 50256);
}

TEST(Bpe, ManyThreadsGiveTheSameIds) {
  auto t = load("gpt2");
  std::string text = fixture("corpus.txt").substr(0, 200000);
  std::vector<int32_t> one = encode(*t, text);
  std::vector<std::vector<int32_t>> got(4);
  std::vector<std::thread> threads;
  for (auto& g : got) threads.emplace_back([&] { g = encode(*t, text); });
  for (auto& th : threads) th.join();
  for (const auto& g : got) EXPECT_EQ(g, one);
}

// The fast ways (GPT-2's pattern matched by hand, the word cache) against
// the plain ones (PCRE2, every word merged), on text that reaches every
// branch: the corpus, long pieces past the cache's bound, special tokens,
// text that NFC and NFKC change.
TEST(Bpe, FastPathsGiveThePlainPathsIds) {
  std::string corpus = fixture("corpus.txt");
  std::vector<std::string> texts = {
      corpus,
      std::string(BpeWordCache::kMaxWord + 1, 'x') + " " + std::string(5000, 'y') + std::string(3000, ' ') + "z",
      "a" + std::string(200, '7') + std::string(150, '!') + std::string(70, '\'') + "s \u4e2d\u6587\u4e2d\u6587",
      std::string(BpeWordCache::kMaxWord, 'w') + " " + std::string(BpeWordCache::kMaxWord - 1, 'v'),
      "\x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f\x10\x11 \x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f\x10\x11",  // more ids
                                                                                                            // than
                                                                                                            // cached
      "<|endoftext|>x<|pad|> <|endoftext|><|endoftext|>it's",
      "e\u0301 \u00e9 \ufb01ne \u2460 \uff21\uff22 \u1e9b\u0323 \u212b x\u00b2 \u00bd \u2167 \u3000\u00a0 \u2028\n",
  };
  for (const char* name : {"gpt2", "gpt2-nfkc"}) {
    auto fast = load(name);
    auto plain = BpeTokenizer::parse(fixture(std::string(name) + ".tokenizer.json"), name, true);
    for (const std::string& text : texts) {
      std::vector<int32_t> want = encode(*plain, text);
      std::string start = nlohmann::json(text.substr(0, 60)).dump();
      EXPECT_EQ(first_difference(encode(*fast, text), want), "") << name << " " << start;
      EXPECT_EQ(first_difference(encode(*fast, text), want), "") << name << " (cached) " << start;
    }
  }
}

TEST(Bpe, FullWordCacheStartsOverAndGivesTheSameIds) {
  std::string text;  // more distinct words than the cache holds
  for (int64_t i = 0; i < 300000; ++i) text += " " + std::to_string(i * 7919) + (i % 3 ? "a" : "");
  auto fast = BpeTokenizer::parse(fixture("gpt2.tokenizer.json"), "gpt2");
  auto plain = BpeTokenizer::parse(fixture("gpt2.tokenizer.json"), "gpt2", true);
  std::vector<int32_t> want = encode(*plain, text);
  EXPECT_EQ(first_difference(encode(*fast, text), want), "");
  EXPECT_EQ(first_difference(encode(*fast, text), want), "") << "(cached)";
}

// GPT-2's pattern by hand against PCRE2 on random strings of the characters
// its alternatives tell apart (every White_Space, letters, numbers of each
// kind, marks, the contractions' letters).
TEST(Bpe, HandMatchedGpt2PatternSplitsAsPcre2) {
  BpeRegex by_hand(kGpt2Pattern, false, "t"), pcre2(kGpt2Pattern, false, "t", false);
  std::vector<std::string> alphabet = {
      " ",      "\n",     "\t",     "\r",     "\v",         "\f",     "'",      "s",      "t",
      "r",      "e",      "v",      "l",      "m",          "d",      "A",      "1",      "!",
      "\x1c",   "\u0085", "\u00a0", "\u1680", "\u180e",     "\u2000", "\u200a", "\u200b", "\u2028",
      "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff",     "\u00e9", "\u0301", "\u4e2d", "\U0001F600",
      "\u00b2", "\u00bd", "\u2167", "\u0663", "\U0001D7D8", "\u02b0", "\u01c5", "\u200d", "\U000E0041"};
  uint64_t state = 12345;
  auto next = [&] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  auto pieces = [](const BpeRegex& r, const std::string& text) {
    std::vector<std::pair<size_t, size_t>> out;
    r.split(text, [&](size_t b, size_t e) { out.emplace_back(b, e); });
    return out;
  };
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    for (size_t k = next() % 24; k > 0; --k) text += alphabet[next() % alphabet.size()];
    ASSERT_EQ(pieces(by_hand, text), pieces(pcre2, text)) << nlohmann::json(text).dump();
  }
  std::string corpus = fixture("corpus.txt");
  EXPECT_EQ(pieces(by_hand, corpus), pieces(pcre2, corpus));
}

// A small byte-level tokenizer.json: every byte, one merge "Ġ a" -> "Ġa".
nlohmann::json tiny() {
  nlohmann::json vocab = nlohmann::json::object();
  int next = 0, id = 0;
  for (int b = 0; b < 256; ++b) {
    bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    std::string c;
    append_utf8(c, printable ? char32_t(b) : char32_t(0x100 + next++));
    vocab[c] = id++;
  }
  vocab["\u0120a"] = id++;
  return {{"normalizer", nullptr},
          {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
          {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"\u0120 a"}}}},
          {"added_tokens", nlohmann::json::array()}};
}

UserError parse_error(const nlohmann::json& j) {
  return error_of([&] { BpeTokenizer::parse(j.dump(), "tok.json"); });
}

TEST(Bpe, TinyFileMergesAndAddsPrefixSpace) {
  auto t = BpeTokenizer::parse(tiny().dump(), "tok.json");
  EXPECT_EQ(t->vocab(), 257);
  EXPECT_EQ(encode(*t, " a"), (std::vector<int32_t>{256}));
  auto j = tiny();
  j["pre_tokenizer"]["add_prefix_space"] = true;
  EXPECT_EQ(encode(*BpeTokenizer::parse(j.dump(), "tok.json"), "a"), (std::vector<int32_t>{256}));
}

TEST(Bpe, MalformedFilesAreCodedErrorsNamingTheFile) {
  auto e = error_of([] { BpeTokenizer::parse("{not json", "tok.json"); });
  EXPECT_EQ(e.code(), Code::DATA_050);
  EXPECT_NE(std::string(e.what()).find("tok.json"), std::string::npos);
  auto j = tiny();
  j["model"]["merges"] = {"\u0120 b c"};
  EXPECT_EQ(parse_error(j).code(), Code::DATA_050);
  j = tiny();
  j["model"]["merges"] = {"x yz"};  // "yz" is not in the vocab
  EXPECT_NE(std::string(parse_error(j).what()).find("\"yz\""), std::string::npos);
  j = tiny();
  j["model"]["vocab"].erase("A");
  EXPECT_NE(std::string(parse_error(j).what()).find("byte 0x41"), std::string::npos);
  j = tiny();
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers",
                         {{{"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}},
                          {{"type", "ByteLevel"}, {"use_regex", false}}}}};
  EXPECT_EQ(parse_error(j).code(), Code::DATA_050);
  EXPECT_EQ(error_of([] { BpeTokenizer::parse("[1, 2]", "tok.json"); }).code(), Code::DATA_050);
}

TEST(Bpe, UnsupportedComponentsAreRefusedByName) {
  auto refused = [](nlohmann::json j, const std::string& name) {
    auto e = parse_error(j);
    EXPECT_EQ(e.code(), Code::DATA_051) << name;
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  };
  auto j = tiny();
  j["model"]["type"] = "WordPiece";
  refused(j, "WordPiece");
  j = tiny();
  j["normalizer"] = {{"type", "Lowercase"}};
  refused(j, "Lowercase");
  j = tiny();
  j["pre_tokenizer"] = {{"type", "Metaspace"}};
  refused(j, "Metaspace");
  j = tiny();
  j["model"]["dropout"] = 0.1;
  refused(j, "dropout");
  j = tiny();
  j["model"]["byte_fallback"] = true;
  refused(j, "byte_fallback");
  j = tiny();
  j["added_tokens"] = {{{"id", 257}, {"content", "<x>"}, {"lstrip", true}}};
  refused(j, "lstrip");
  j = tiny();
  j["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers", {{{"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "Removed"}}}}};
  refused(j, "Removed");
}

TEST(Bpe, MergesAsPairsEqualMergesAsStrings) {
  auto j = tiny();
  j["model"]["merges"] = nlohmann::json::array({nlohmann::json::array({"\u0120", "a"})});
  EXPECT_EQ(encode(*BpeTokenizer::parse(j.dump(), "tok.json"), " a a"), (std::vector<int32_t>{256, 256}));
}

TEST(Bpe, InvalidUtf8InTheTextNamesItsPosition) {
  TokenizerSpec s;
  s.kind = "bpe";
  s.file_model = BpeTokenizer::parse(tiny().dump(), "tok.json");
  Tokenizer t(s);
  EXPECT_EQ(t.vocab(), 257);
  FormatSpec spec{"text", &t, 0, ""};
  std::vector<int32_t> out;
  auto e = error_of([&] { decode_shard(spec, "c.txt", "ok\nb\xff", out); });
  EXPECT_EQ(e.code(), Code::DATA_007);
  EXPECT_NE(std::string(e.what()).find("c.txt:2:2"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace sx::data
