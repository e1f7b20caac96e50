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

}  // namespace
}  // namespace sx
