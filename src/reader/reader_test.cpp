#include "reader/reader.h"

#include <gtest/gtest.h>

#include "util/big_stack.h"
#include "util/error.h"

namespace sx {
namespace {

std::string read1(std::string_view text) {
  auto vs = read_string(text);
  EXPECT_EQ(vs.size(), 1u);
  return vs.empty() ? "" : repr(*vs[0]);
}

Code read_error(std::string_view text) {
  try {
    read_string(text);
  } catch (const UserError& e) {
    return e.code();
  }
  ADD_FAILURE() << "expected an error reading: " << text;
  return Code::CLI_001;
}

TEST(Reader, ByteOrderMarkIsSkipped) {
  auto vs = read_string("\xEF\xBB\xBF(a\n b)");
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(repr(*vs[0]), "(a b)");
  EXPECT_EQ(vs[0]->span.line, 1u);
  EXPECT_EQ(vs[0]->span.col, 1u);
  EXPECT_EQ(vs[0]->span.begin, 0u);  // offsets count from the first character after the mark
  EXPECT_EQ(vs[0]->items[1]->span.line, 2u);
  EXPECT_EQ(vs[0]->items[1]->span.col, 2u);
  // Only at the start: elsewhere U+FEFF is a character like any other, here inside a string.
  EXPECT_EQ(read1("\"\xEF\xBB\xBF\""), "\"\xEF\xBB\xBF\"");
}

TEST(Reader, Atoms) {
  EXPECT_EQ(read1("42"), "42");
  EXPECT_EQ(read1("-7"), "-7");
  EXPECT_EQ(read1("1_000_000"), "1000000");
  EXPECT_EQ(read1("0.5"), "0.5");
  EXPECT_EQ(read1("3e-3"), "0.003");
  EXPECT_EQ(read1("-1.5E2"), "-150.0");
  EXPECT_EQ(read1("1_000.0"), "1000.0");
  EXPECT_EQ(read1("d-model"), "d-model");
  EXPECT_EQ(read1("blocks.0"), "blocks.0");
  EXPECT_EQ(read1("attention/entropy"), "attention/entropy");
  EXPECT_EQ(read1(":steps"), ":steps");
  EXPECT_EQ(read1("true"), "true");
  EXPECT_EQ(read1("nil"), "nil");
  EXPECT_EQ(read1("-"), "-");
  EXPECT_EQ(read1("+"), "+");
}

TEST(Reader, StringsAndEscapes) {
  auto v = read_string(R"("a\nb\t\\\"\u{3bb}")");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0]->s, "a\nb\t\\\"\xce\xbb");
}

TEST(Reader, ListsVectorsQuotes) {
  EXPECT_EQ(read1("(a [b c] 'd `(e ,f ,@g))"),
            "(a [b c] (quote d) (quasiquote (e (unquote f) (unquote-splicing g))))");
}

TEST(Reader, Comments) {
  auto v = read_string("; line\n#| outer #| inner |# still |# 1 #;(skipped 2) 3");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0]->i, 1);
  EXPECT_EQ(v[1]->i, 3);
}

TEST(Reader, Spans) {
  auto v = read_string("\n  (f\n   (g 1))");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0]->span.line, 2u);
  EXPECT_EQ(v[0]->span.col, 3u);
  const auto& g = v[0]->items[1];
  EXPECT_EQ(g->span.line, 3u);
  EXPECT_EQ(g->span.col, 4u);
  auto u = read_string("\"λ\" x");
  EXPECT_EQ(u[1]->span.col, 5u);  // columns count code points
}

TEST(Reader, Errors) {
  EXPECT_EQ(read_error("(a b"), Code::READ_001);
  EXPECT_EQ(read_error("a)"), Code::READ_001);
  EXPECT_EQ(read_error("(a]"), Code::READ_001);
  EXPECT_EQ(read_error("\"abc"), Code::READ_002);
  EXPECT_EQ(read_error(R"("\q")"), Code::READ_002);
  EXPECT_EQ(read_error(R"("\u{d800}")"), Code::READ_002);
  EXPECT_EQ(read_error("99999999999999999999"), Code::READ_003);
  EXPECT_EQ(read_error("1e999"), Code::READ_003);
  EXPECT_EQ(read_error("\xff"), Code::READ_004);
  try {
    read_string("(def a 1)\n(def \xc3\xa9\xff 2)");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), Code::READ_004);
    EXPECT_EQ(e.diagnostics().front().span.line, 2u);
    EXPECT_EQ(e.diagnostics().front().span.col, 7u);  // é is one column
  }
  EXPECT_EQ(read_error("\"\xc0\x80\""), Code::READ_004);  // overlong
  EXPECT_EQ(read_error("12abc"), Code::READ_007);
  EXPECT_EQ(read_error("1__0"), Code::READ_007);
  EXPECT_EQ(read_error("#x"), Code::READ_007);
  EXPECT_EQ(read_error("'"), Code::READ_007);
  EXPECT_EQ(read_error("#| open"), Code::READ_008);
}

TEST(Reader, NestingLimit) {
  // The reader recurses with the nesting; the CLI reads on a big stack, and so does this test
  // (a sanitizer's frames are several times larger than a release build's).
  run_with_big_stack([] {
    std::string ok(10'000, '(');
    ok += std::string(10'000, ')');
    EXPECT_NO_THROW(read_string(ok));
    std::string deep(10'001, '(');
    deep += std::string(10'001, ')');
    EXPECT_EQ(read_error(deep), Code::READ_005);
    std::string quotes(10'000, '\'');
    EXPECT_NO_THROW(read_string(quotes + "x"));
    EXPECT_EQ(read_error("'" + quotes + "x"), Code::READ_005);
  });
}
TEST(Reader, SizeLimit) {
  std::string big(kMaxSourceBytes + 1, ' ');
  EXPECT_EQ(read_error(big), Code::READ_006);
}

TEST(FormatFloat, CanonicalForms) {
  EXPECT_EQ(format_float(3e-3), "0.003");
  EXPECT_EQ(format_float(1.0), "1.0");
  EXPECT_EQ(format_float(1e-7), "1e-07");
  EXPECT_EQ(format_float(1e-6), "0.000001");
  EXPECT_EQ(format_float(1e21), "1e+21");
  EXPECT_EQ(format_float(-2.5), "-2.5");
  EXPECT_EQ(format_float(0.1), "0.1");
}

}  // namespace
}  // namespace sx
