#include "util/printable.h"

#include <fmt/format.h>

#include "util/utf8.h"

namespace sx {

namespace {

bool in(char32_t cp, char32_t lo, char32_t hi) { return cp >= lo && cp <= hi; }

// Code points a terminal acts on rather than shows: C0 and C1 controls, DEL,
// and the ones that reorder or break lines (bidi overrides, U+2028/9).
bool is_control(char32_t cp) {
  return cp < 0x20 || in(cp, 0x7F, 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F || in(cp, 0x2028, 0x202E) ||
         in(cp, 0x2066, 0x2069);
}

// Columns on a terminal, as wcwidth(3) answers for the common cases: East
// Asian wide and emoji take two, combining marks and joiners none.
size_t columns(char32_t cp) {
  if (in(cp, 0x0300, 0x036F) || in(cp, 0x1AB0, 0x1AFF) || in(cp, 0x1DC0, 0x1DFF) || in(cp, 0x200B, 0x200D) ||
      in(cp, 0x20D0, 0x20FF) || in(cp, 0xFE00, 0xFE0F) || in(cp, 0xFE20, 0xFE2F))
    return 0;
  if (in(cp, 0x1100, 0x115F) || in(cp, 0x2E80, 0x303E) || in(cp, 0x3041, 0x33FF) || in(cp, 0x3400, 0x4DBF) ||
      in(cp, 0x4E00, 0x9FFF) || in(cp, 0xA000, 0xA4CF) || in(cp, 0xAC00, 0xD7A3) || in(cp, 0xF900, 0xFAFF) ||
      in(cp, 0xFE30, 0xFE4F) || in(cp, 0xFF00, 0xFF60) || in(cp, 0xFFE0, 0xFFE6) || in(cp, 0x1F300, 0x1F64F) ||
      in(cp, 0x1F900, 0x1F9FF) || in(cp, 0x20000, 0x3FFFD))
    return 2;
  return 1;
}

std::string escape(char32_t cp) {
  switch (cp) {
    case '\n':
      return "\\n";
    case '\t':
      return "\\t";
    case '\r':
      return "\\r";
    default:
      return cp < 0x80 ? fmt::format("\\x{:02x}", static_cast<unsigned>(cp))
                       : fmt::format("\\u{{{:x}}}", static_cast<unsigned>(cp));
  }
}

}  // namespace

size_t cell_bytes(std::string_view s, size_t i) {
  char32_t cp = 0;
  size_t len = decode_utf8(reinterpret_cast<const unsigned char*>(s.data()) + i, s.size() - i, &cp);
  return len == 0 ? 1 : len;
}

std::vector<PrintableCell> printable_cells(std::string_view s) {
  std::vector<PrintableCell> cells;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    size_t len = decode_utf8(p + i, s.size() - i, &cp);
    PrintableCell c{i, {}, 1};
    if (len == 0) {
      c.text = fmt::format("\\x{:02x}", p[i]);
      len = 1;
    } else if (is_control(cp)) {
      c.text = escape(cp);
    } else {
      c.text = std::string(s.substr(i, len));
      c.width = columns(cp);
    }
    if (c.text.front() == '\\') c.width = c.text.size();
    cells.push_back(std::move(c));
    i += len;
  }
  return cells;
}

std::string printable(std::string_view s) {
  // The common case, plain printable ASCII, is returned as it is.
  bool plain = true;
  for (unsigned char c : s) plain = plain && c >= 0x20 && c < 0x7F;
  if (plain) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (const auto& c : printable_cells(s)) out += c.text;
  return out;
}

std::string one_line(std::string_view text) {
  bool newline = text.ends_with('\n');
  if (newline) text.remove_suffix(1);
  std::string out = printable(text);
  if (newline) out += '\n';
  return out;
}

std::string without_userinfo(std::string_view text) {
  std::string out;
  size_t i = 0;
  for (size_t scheme; (scheme = text.find("://", i)) != std::string_view::npos;) {
    size_t host = scheme + 3;
    size_t end = text.find_first_of("/?#\\ \t\r\n\"'`<>", host);
    if (end == std::string_view::npos) end = text.size();
    size_t at = text.substr(host, end - host).rfind('@');
    out += text.substr(i, host - i);
    if (at != std::string_view::npos) {
      out += "***";
      i = host + at;  // from the '@'
    } else {
      i = host;
    }
  }
  out += text.substr(i);
  return out;
}

std::string more_items(size_t total) {
  return total > kListShown ? fmt::format("and {} more", total - kListShown) : std::string();
}

std::string join_capped(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < kListShown; ++i) {
    if (i) out += sep;
    out += items[i];
  }
  if (items.size() > kListShown) out += " " + more_items(items.size());
  return out;
}

}  // namespace sx
