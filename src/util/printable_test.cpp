#include "util/printable.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace sx {
namespace {

TEST(Printable, ControlCharactersAreEscaped) {
  EXPECT_EQ(printable("plain text"), "plain text");
  EXPECT_EQ(printable("a\x1b]0;pwned\x07z"), "a\\x1b]0;pwned\\x07z");
  EXPECT_EQ(printable(std::string("nul\0end", 7)), "nul\\x00end");
  EXPECT_EQ(printable("one\ntwo\r\tthree\x7f"), "one\\ntwo\\r\\tthree\\x7f");
  EXPECT_EQ(printable("c1 \xc2\x9b"
                      "31m"),
            "c1 \\u{9b}31m");  // U+009B, the 8-bit CSI
  EXPECT_EQ(printable("bidi \xe2\x80\xae"
                      "txt"),
            "bidi \\u{202e}txt");  // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(printable("ls \xe2\x80\xa8"
                      "x"),
            "ls \\u{2028}x");  // LINE SEPARATOR
}

TEST(Printable, InvalidUtf8IsEscapedByteByByte) {
  EXPECT_EQ(printable("caf\xe9"), "caf\\xe9");
  EXPECT_EQ(printable("\xc0\x80"), "\\xc0\\x80");           // overlong NUL
  EXPECT_EQ(printable("ab\xe2\x82"), "ab\\xe2\\x82");       // truncated
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
}

TEST(Printable, ValidNonAsciiStaysAsItIs) {
  EXPECT_EQ(printable("é λ 日本語 😀"), "é λ 日本語 😀");
  EXPECT_EQ(printable("back\\slash"), "back\\slash");  // not doubled
}

TEST(Printable, CellsKnowTheirColumns) {
  auto cells = printable_cells("a\té日\xff");
  ASSERT_EQ(cells.size(), 5u);
  EXPECT_EQ(cells[0].width, 1u);
  EXPECT_EQ(cells[1].text, "\\t");
  EXPECT_EQ(cells[1].width, 2u);
  EXPECT_EQ(cells[2].width, 1u);
  EXPECT_EQ(cells[2].byte, 2u);
  EXPECT_EQ(cells[3].width, 2u);
  EXPECT_EQ(cells[4].text, "\\xff");
  EXPECT_EQ(cells[4].width, 4u);
  EXPECT_EQ(printable_cells("e\xcc\x81")[1].width, 0u);  // a combining acute accent
}

TEST(Printable, OneLineKeepsOnlyTheFinalNewline) {
  EXPECT_EQ(one_line("checkpoint -> /tmp/a\nerror[E-X]: forged\n"), "checkpoint -> /tmp/a\\nerror[E-X]: forged\n");
  EXPECT_EQ(one_line("no newline"), "no newline");
  EXPECT_EQ(one_line("\n"), "\n");
}

TEST(Printable, UserinfoIsNeverShown) {
  EXPECT_EQ(without_userinfo("http://user:secret@127.0.0.1:1/"), "http://***@127.0.0.1:1/");
  EXPECT_EQ(without_userinfo("https://token@host"), "https://***@host");
  EXPECT_EQ(without_userinfo("GET s3://b/k at http://a:b@h:9000 (data role)"),
            "GET s3://b/k at http://***@h:9000 (data role)");
  EXPECT_EQ(without_userinfo("http://u:p@a/x and https://v:q@b/"), "http://***@a/x and https://***@b/");
  EXPECT_EQ(without_userinfo("http://u:p@@evil@host/"), "http://***@host/");
  // An '@' after the host is part of the path, not userinfo.
  EXPECT_EQ(without_userinfo("http://host/a@b"), "http://host/a@b");
  EXPECT_EQ(without_userinfo("no url, user@example.com"), "no url, user@example.com");
}

TEST(Printable, ListsAreCapped) {
  std::vector<std::string> few = {"a", "b", "c"};
  EXPECT_EQ(join_capped(few, ", "), "a, b, c");
  std::vector<std::string> many;
  for (int i = 0; i < 10000; ++i) many.push_back("t" + std::to_string(i));
  std::string s = join_capped(many, ", ");
  EXPECT_TRUE(s.starts_with("t0, t1, "));
  EXPECT_TRUE(s.ends_with("t19 and 9980 more")) << s;
  EXPECT_EQ(more_items(kListShown), "");
  EXPECT_EQ(more_items(kListShown + 1), "and 1 more");
}

TEST(Printable, RenderEscapesEveryPartAndCapsNotes) {
  Diagnostic d{Code::CKPT_007, "tensor `x\x1b]0;t\x07` in\nerror[E-FAKE-001]: forged", {}, {}, "help\r\n"};
  for (int i = 0; i < 30; ++i) d.notes.push_back("note\x1b[2J" + std::to_string(i));
  std::string out = render(d);
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_EQ(out.find('\r'), std::string::npos);
  EXPECT_EQ(out.find("\nerror[E-FAKE"), std::string::npos);
  EXPECT_NE(out.find("in\\nerror[E-FAKE-001]: forged"), std::string::npos);
  EXPECT_NE(out.find("= note\\x1b[2J19\n"), std::string::npos);
  EXPECT_EQ(out.find("note\\x1b[2J20"), std::string::npos);
  EXPECT_NE(out.find("  = and 10 more\n"), std::string::npos) << out;
  EXPECT_NE(out.find("= help: help\\r\\n\n"), std::string::npos) << out;
}

TEST(Printable, RenderCapsDiagnostics) {
  std::vector<Diagnostic> ds;
  for (int i = 0; i < 25; ++i) ds.push_back({Code::CKPT_007, "refused " + std::to_string(i), {}, {}, {}});
  std::string out = render(UserError(ds));
  EXPECT_NE(out.find("refused 19\n"), std::string::npos);
  EXPECT_EQ(out.find("refused 20\n"), std::string::npos);
  EXPECT_TRUE(out.ends_with("and 5 more errors\n")) << out;
}

}  // namespace
}  // namespace sx
