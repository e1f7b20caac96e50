#include "util/error.h"

#include <gtest/gtest.h>

#include "util/source.h"

namespace sx {
namespace {

std::string rendered(const std::string& text, uint32_t begin, uint32_t end, uint32_t col) {
  int32_t f = Sources::global().add("/t/long.sx", "long.sx", text);
  return render(Diagnostic{Code::READ_007, "m", Span{f, begin, end, 1, col}, {}, {}});
}

TEST(Render, ShortLineShownWhole) {
  EXPECT_EQ(rendered("(def x @)", 7, 8, 8),
            "error[E-READ-007]: m\n"
            " --> long.sx:1:8\n"
            "  |\n"
            "1 | (def x @)\n"
            "  |        ^\n");
}

TEST(Render, LongLineShownAroundTheSpan) {
  std::string text = "(def x [" + std::string(300, '1') + " @ " + std::string(300, '2') + "])";
  uint32_t at = static_cast<uint32_t>(text.find('@'));
  std::string out = rendered(text, at, at + 1, at + 1);
  std::string shown = "..." + std::string(29, '1') + " @ " + std::string(68, '2') + "...";
  EXPECT_NE(out.find("1 | " + shown + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  | " + std::string(3 + 30, ' ') + "^\n"), std::string::npos) << out;
}

TEST(Render, LongLineEndShownToTheEnd) {
  std::string text = std::string(200, 'a') + "é";
  uint32_t end = static_cast<uint32_t>(text.size());
  std::string out = rendered(text, end, end, 202);
  EXPECT_NE(out.find("1 | ..." + std::string(99, 'a') + "é\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  | " + std::string(3 + 100, ' ') + "^\n"), std::string::npos) << out;
}

// A tab or a control character is shown escaped ("\t", "\x1b": two and four
// columns) and the carets move with it, so they stay under the span.
TEST(Render, CaretUnderTheSpanAfterATab) {
  EXPECT_EQ(rendered("(def\tx @)", 7, 8, 8),
            "error[E-READ-007]: m\n"
            " --> long.sx:1:8\n"
            "  |\n"
            "1 | (def\\tx @)\n"
            "  |         ^\n");
}

TEST(Render, CaretUnderTheSpanAfterAControlCharacter) {
  std::string out = rendered("(def \x1b]0;x\x07 @)", 12, 13, 13);
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  // "(def " 5, "\x1b" 4, "]0;x" 4, "\x07" 4, " " 1: the '@' is at column 18.
  EXPECT_NE(out.find("1 | (def \\x1b]0;x\\x07 @)\n  | " + std::string(18, ' ') + "^\n"), std::string::npos) << out;
}

TEST(Render, CaretsCoverAnEscapedSpan) {
  std::string out = rendered("(def x \"a\tb\")", 9, 10, 10);
  EXPECT_NE(out.find("1 | (def x \"a\\tb\")\n  |          ^^\n"), std::string::npos) << out;
}

// A wide (CJK) character takes two columns on a terminal; é takes one.
TEST(Render, CaretUnderTheSpanAfterWideCharacters) {
  std::string text = "(def 日本 é @)";
  uint32_t at = static_cast<uint32_t>(text.find('@'));
  std::string out = rendered(text, at, at + 1, 11);
  EXPECT_NE(out.find("1 | (def 日本 é @)\n  | " + std::string(12, ' ') + "^\n"), std::string::npos) << out;
}

TEST(Render, InvalidByteShownEscapedWithItsCaret) {
  std::string out = rendered("(def \xc3\xa9t\xe9 1)", 8, 9, 8);
  EXPECT_NE(out.find("1 | (def ét\\xe9 1)\n  |        ^^^^\n"), std::string::npos) << out;
}

TEST(Render, LongLineOfControlCharactersStaysAligned) {
  std::string text = std::string(200, '\x01') + "@";
  uint32_t at = static_cast<uint32_t>(text.find('@'));
  std::string out = rendered(text, at, at + 1, at + 1);
  std::string shown;
  for (int i = 0; i < 99; ++i) shown += "\\x01";
  EXPECT_NE(out.find("1 | ..." + shown + "@\n  | " + std::string(3 + 99 * 4, ' ') + "^\n"), std::string::npos) << out;
}

// Only the shown window of a line is escaped and measured: a generated file's
// line of megabytes costs no more memory than the window.
TEST(Render, LineOfMegabytesShownAroundTheSpan) {
  std::string text = std::string(8 << 20, 'a') + "\t@" + std::string(1 << 20, 'b');
  uint32_t at = static_cast<uint32_t>(text.find('@'));
  std::string out = rendered(text, at, at + 1, at + 1);
  EXPECT_NE(out.find("1 | ..." + std::string(29, 'a') + "\\t@" + std::string(69, 'b') + "...\n"), std::string::npos)
      << out.substr(0, 400);
  EXPECT_NE(out.find("  | " + std::string(3 + 29 + 2, ' ') + "^\n"), std::string::npos) << out.substr(0, 400);
  EXPECT_LT(out.size(), 1000u);
}

}  // namespace
}  // namespace sx
