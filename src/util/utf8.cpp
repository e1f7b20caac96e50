#include "util/utf8.h"

#include <fmt/format.h>

namespace sx {

size_t decode_utf8(const unsigned char* p, size_t n, char32_t* cp) {
  if (n == 0) return 0;
  unsigned char c = p[0];
  if (c < 0x80) return *cp = c, 1;
  size_t len;
  char32_t v, min;
  if ((c & 0xE0) == 0xC0)
    len = 2, v = c & 0x1F, min = 0x80;
  else if ((c & 0xF0) == 0xE0)
    len = 3, v = c & 0x0F, min = 0x800;
  else if ((c & 0xF8) == 0xF0)
    len = 4, v = c & 0x07, min = 0x10000;
  else
    return 0;
  if (n < len) return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    v = (v << 6) | (p[i] & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  return *cp = v, len;
}

void append_utf8(std::string& out, char32_t cp) {
  int len = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  static const unsigned char lead[] = {0, 0, 0xC0, 0xE0, 0xF0};
  if (len == 1) {
    out += static_cast<char>(cp);
    return;
  }
  for (int i = 0; i < len; ++i)
    out += static_cast<char>(i == 0 ? lead[len] | (cp >> (6 * (len - 1))) : 0x80 | ((cp >> (6 * (len - 1 - i))) & 0x3F));
}

size_t invalid_utf8_at(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  char32_t cp;
  for (size_t i = 0; i < s.size();) {
    size_t len = decode_utf8(p + i, s.size() - i, &cp);
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;
}

std::string show_char(char32_t cp) {
  std::string glyph;
  switch (cp) {
    case '\n':
      glyph = "\\n";
      break;
    case '\t':
      glyph = "\\t";
      break;
    case '\r':
      glyph = "\\r";
      break;
    case '\'':
      glyph = "\\'";
      break;
    default:
      if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) {
        glyph = "?";
      } else if (cp < 0x80) {
        glyph = static_cast<char>(cp);
      } else {
        append_utf8(glyph, cp);
      }
  }
  if (glyph == "?") return fmt::format("U+{:04X}", static_cast<uint32_t>(cp));
  return fmt::format("'{}' (U+{:04X})", glyph, static_cast<uint32_t>(cp));
}

}  // namespace sx
