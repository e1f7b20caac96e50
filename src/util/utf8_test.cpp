#include "util/utf8.h"

#include <gtest/gtest.h>

namespace sx {
namespace {

TEST(Utf8, EncodeDecodeRoundTrip) {
  for (char32_t cp : {U'\0', U'a', U'\x7f', U'\x80', U'é', U'\x7ff', U'\x800', U'λ', U'\xffff', U'😀', U'\x10ffff'}) {
    std::string s;
    append_utf8(s, cp);
    char32_t back = 0;
    EXPECT_EQ(decode_utf8(reinterpret_cast<const unsigned char*>(s.data()), s.size(), &back), s.size());
    EXPECT_EQ(back, cp);
  }
}

TEST(Utf8, InvalidAt) {
  EXPECT_EQ(invalid_utf8_at("plain"), std::string_view::npos);
  EXPECT_EQ(invalid_utf8_at("é😀"), std::string_view::npos);
  EXPECT_EQ(invalid_utf8_at("ab\xff"), 2u);
  EXPECT_EQ(invalid_utf8_at("a\xc0\x80"), 1u);          // overlong
  EXPECT_EQ(invalid_utf8_at("a\xed\xa0\x80"), 1u);      // a surrogate
  EXPECT_EQ(invalid_utf8_at("a\xf4\x90\x80\x80"), 1u);  // past U+10FFFF
  EXPECT_EQ(invalid_utf8_at("ab\xc3"), 2u);             // truncated
}

TEST(Utf8, ShowChar) {
  EXPECT_EQ(show_char(U'é'), "'é' (U+00E9)");
  EXPECT_EQ(show_char(U'\n'), "'\\n' (U+000A)");
  EXPECT_EQ(show_char(0x1), "U+0001");
}

}  // namespace
}  // namespace sx
