#include "data/formats.h"

#include <gtest/gtest.h>

#include <chrono>

#include "data/test_util.h"
#include "util/utf8.h"

namespace sx::data {
namespace {

using testing::error_of;

std::vector<int32_t> decode(const FormatSpec& spec, std::string_view bytes, std::string name = "f.txt") {
  std::vector<int32_t> out;
  decode_shard(spec, name, bytes, out);
  return out;
}

Tokenizer chars_tok(std::string alphabet, std::optional<std::string> unknown = {}) {
  return Tokenizer(*testing::chars(std::move(alphabet), std::move(unknown)));
}

TEST(Tokenizer, CharsOneIdPerCodePointInOrder) {
  Tokenizer t = chars_tok("ab\né c");
  EXPECT_EQ(t.vocab(), 6);
  FormatSpec spec{"text", &t, 0, ""};
  EXPECT_EQ(decode(spec, "cab\né "), (std::vector<int32_t>{5, 0, 1, 2, 3, 4}));
}

TEST(Tokenizer, CharOutsideAlphabetNamesFileLineColumnAndChar) {
  Tokenizer t = chars_tok("ab\n");
  FormatSpec spec{"text", &t, 0, ""};
  auto e = error_of([&] { decode(spec, "ab\naéba\nx", "data/train.txt"); });
  EXPECT_EQ(e.code(), Code::DATA_006);
  EXPECT_NE(std::string(e.what()).find("data/train.txt:2:2"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("'é' (U+00E9)"), std::string::npos) << e.what();
  // A column counts characters, not bytes: x comes after the two-byte é.
  Tokenizer t2 = chars_tok("abé\n");
  FormatSpec spec2{"text", &t2, 0, ""};
  e = error_of([&] { decode(spec2, "éax", "f.txt"); });
  EXPECT_NE(std::string(e.what()).find("f.txt:1:3"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
}

// 200,000 lines: linear decoding takes well under a second; a copy of the
// whole sequence per line (what an exact reserve per line did) takes minutes.
TEST(Jsonl, LargeJsonlOpensInLinearTime) {
  Tokenizer t = chars_tok("abcdefghijklmnopqrstuvwxyz ");
  FormatSpec spec{"jsonl", &t, 0, "text"};
  std::string text;
  const int lines = 200000;
  for (int i = 0; i < lines; ++i) text += "{\"text\": \"the quick brown fox jumps over\"}\n";
  auto start = std::chrono::steady_clock::now();
  std::vector<int32_t> ids = decode(spec, text, "big.jsonl");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(ids.size(), static_cast<size_t>(lines) * 30);
  EXPECT_EQ(ids[0], 19);  // 't'
  EXPECT_LT(seconds, 20.0) << "decoding " << lines << " jsonl lines took " << seconds << " s";
}

TEST(Tokenizer, UnknownMapsOutsideCharacters) {
  Tokenizer t = chars_tok("ab?", "?");
  FormatSpec spec{"text", &t, 0, ""};
  EXPECT_EQ(decode(spec, "aXb€"), (std::vector<int32_t>{0, 2, 1, 2}));
}

TEST(Tokenizer, InvalidUtf8IsAnErrorNotACrash) {
  Tokenizer t = chars_tok("ab?", "?");
  FormatSpec spec{"text", &t, 0, ""};
  for (std::string bad : {"a\xff", "a\xc3", "\xe2\x82", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80"}) {
    auto e = error_of([&] { decode(spec, bad, "bad.txt"); });
    EXPECT_EQ(e.code(), Code::DATA_007) << bad;
    EXPECT_NE(std::string(e.what()).find("bad.txt:1:"), std::string::npos) << e.what();
  }
}

TEST(Tokenizer, BytesAreIds0To255) {
  TokenizerSpec s;
  s.kind = "bytes";
  Tokenizer t(s);
  EXPECT_EQ(t.vocab(), 256);
  FormatSpec spec{"text", &t, 0, ""};
  EXPECT_EQ(decode(spec, std::string("a\xff\0", 3)), (std::vector<int32_t>{97, 255, 0}));
}

TEST(Tokenizer, BadUnknownOrAlphabet) {
  EXPECT_EQ(error_of([] { chars_tok("ab", "?"); }).code(), Code::DATA_015);
  EXPECT_EQ(error_of([] { chars_tok("ab", "ab"); }).code(), Code::DATA_015);
  EXPECT_EQ(error_of([] { chars_tok("a\xff"); }).code(), Code::DATA_015);
}

TEST(Tokens, U16AndU32AreLittleEndian) {
  FormatSpec u16{"tokens-u16", nullptr, 1000, ""}, u32{"tokens-u32", nullptr, 100000, ""};
  EXPECT_EQ(decode(u16, std::string("\x01\x00\xe7\x03", 4)), (std::vector<int32_t>{1, 999}));
  EXPECT_EQ(decode(u32, std::string("\x9f\x86\x01\x00\x02\x00\x00\x00", 8)), (std::vector<int32_t>{99999, 2}));
}

TEST(Tokens, IdAtOrAboveVocabNamesShardAndOffset) {
  FormatSpec u16{"tokens-u16", nullptr, 50, ""};
  auto e = error_of([&] { decode(u16, std::string("\x01\x00\x02\x00\x32\x00", 6), "shard-1.bin"); });
  EXPECT_EQ(e.code(), Code::DATA_008);
  EXPECT_NE(std::string(e.what()).find("shard-1.bin at byte 4"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("token id 50"), std::string::npos) << e.what();
}

TEST(Tokens, HugeU32IdsAreErrorsEvenWithoutVocab) {
  FormatSpec u32{"tokens-u32", nullptr, 0, ""};
  auto e = error_of([&] { decode(u32, std::string("\xff\xff\xff\xff", 4)); });
  EXPECT_EQ(e.code(), Code::DATA_008);
  EXPECT_NE(std::string(e.what()).find("4294967295"), std::string::npos);
}

TEST(Tokens, OddByteCountIsTruncated) {
  FormatSpec u16{"tokens-u16", nullptr, 50, ""}, u32{"tokens-u32", nullptr, 50, ""};
  auto e = error_of([&] { decode(u16, std::string("\x01\x00\x02", 3), "t.bin"); });
  EXPECT_EQ(e.code(), Code::DATA_009);
  EXPECT_NE(std::string(e.what()).find("t.bin has 3 bytes"), std::string::npos) << e.what();
  EXPECT_EQ(error_of([&] { decode(u32, std::string("\0\0\0\0\0\0", 6)); }).code(), Code::DATA_009);
}

TEST(Jsonl, FieldTextPerLineConcatenated) {
  Tokenizer t = chars_tok("abc");
  FormatSpec spec{"jsonl", &t, 0, "body"};
  EXPECT_EQ(decode(spec, "{\"body\":\"ab\",\"n\":1}\n\n  \r\n{\"body\":\"c\"}\r\n{\"body\":\"\"}"),
            (std::vector<int32_t>{0, 1, 2}));
}

TEST(Jsonl, BadLinesNameFileAndLine) {
  Tokenizer t = chars_tok("abc");
  FormatSpec spec{"jsonl", &t, 0, "text"};
  struct Case {
    std::string input, expect;
  } cases[] = {{"{\"text\":\"a\"}\n{\"text\":", "d.jsonl:2: not valid JSON"},
               {"[1]", "d.jsonl:1: expected a JSON object, found array"},
               {"{}\n", "d.jsonl:1: the object has no field \"text\""},
               {"\n{\"text\":3}", "d.jsonl:2: field \"text\" is number"},
               {"{\"text\":\"a\xff\"}", "d.jsonl:1: not valid JSON"},
               {"921e308433", "d.jsonl:1: not valid JSON (a number out of range)"},  // found by fuzz_data_formats
               {"{\"text\": \"a\", \"n\": 1e999}", "d.jsonl:1: not valid JSON (a number out of range)"}};
  for (auto& c : cases) {
    auto e = error_of([&] { decode(spec, c.input, "d.jsonl"); });
    EXPECT_EQ(e.code(), Code::DATA_010) << c.input;
    EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos) << e.what();
  }
  Tokenizer t2 = chars_tok("abc\n");
  FormatSpec spec2{"jsonl", &t2, 0, "text"};
  auto e = error_of([&] { decode(spec2, "{\"text\":\"ab\"}\n{\"text\":\"a\\nbz\"}", "d.jsonl"); });
  EXPECT_EQ(e.code(), Code::DATA_006);
  EXPECT_NE(std::string(e.what()).find("d.jsonl:2: field \"text\", line 2 column 2"), std::string::npos) << e.what();
}

TEST(Utf8, ShowChar) {
  EXPECT_EQ(show_char(U'é'), "'é' (U+00E9)");
  EXPECT_EQ(show_char(U'\n'), "'\\n' (U+000A)");
  EXPECT_EQ(show_char(0x1), "U+0001");
  EXPECT_EQ(show_char(U'😀'), "'😀' (U+1F600)");
}

}  // namespace
}  // namespace sx::data
