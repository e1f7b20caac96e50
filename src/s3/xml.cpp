#include "s3/xml.h"

#include <cstdint>

#include "util/utf8.h"

namespace sx::s3::xml {
namespace {

bool starts(std::string_view s, size_t pos, std::string_view with) { return s.substr(pos).starts_with(with); }

// Past the markup that starts at `pos` (a '<'), or npos when it never ends.
size_t skip_special(std::string_view doc, size_t pos) {
  struct Kind {
    std::string_view open, close;
  };
  for (Kind k : {Kind{"<!--", "-->"}, Kind{"<![CDATA[", "]]>"}, Kind{"<?", "?>"}, Kind{"<!", ">"}}) {
    if (!starts(doc, pos, k.open)) continue;
    size_t end = doc.find(k.close, pos + k.open.size());
    return end == std::string_view::npos ? end : end + k.close.size();
  }
  return 0;  // not special
}

std::string_view name_at(std::string_view doc, size_t pos) {  // pos: after '<' or "</"
  size_t end = pos;
  while (end < doc.size() && doc[end] != '>' && doc[end] != '/' && doc[end] != ' ' && doc[end] != '\t' &&
         doc[end] != '\r' && doc[end] != '\n')
    ++end;
  return doc.substr(pos, end - pos);
}

// Decodes the entity at s[pos] == '&' into out; returns its length, or 0 when it is none.
size_t entity(std::string_view s, size_t pos, std::string& out) {
  size_t semi = s.find(';', pos);
  if (semi == std::string_view::npos || semi - pos > 12) return 0;
  std::string_view name = s.substr(pos + 1, semi - pos - 1);
  static constexpr std::pair<std::string_view, char> kNamed[] = {
      {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
  for (auto [n, c] : kNamed)
    if (name == n) return out += c, semi - pos + 1;
  if (name.size() < 2 || name[0] != '#') return 0;
  bool hex = name[1] == 'x' || name[1] == 'X';
  std::string_view digits = name.substr(hex ? 2 : 1);
  if (digits.empty()) return 0;
  uint32_t cp = 0;
  for (char c : digits) {
    int d = c >= '0' && c <= '9'          ? c - '0'
            : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
            : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                          : -1;
    if (d < 0) return 0;
    cp = cp * (hex ? 16 : 10) + static_cast<uint32_t>(d);
    if (cp > 0x10FFFF) return 0;
  }
  if (cp != 0 && (cp < 0xD800 || cp > 0xDFFF)) append_utf8(out, cp);  // not a character: dropped
  return semi - pos + 1;
}

}  // namespace

std::vector<std::string_view> elements(std::string_view doc, std::string_view tag) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while ((pos = doc.find('<', pos)) != std::string_view::npos) {
    if (size_t past = skip_special(doc, pos)) {
      if (past == std::string_view::npos) break;
      pos = past;
      continue;
    }
    if (starts(doc, pos, "</") || name_at(doc, pos + 1) != tag) {
      ++pos;
      continue;
    }
    size_t gt = doc.find('>', pos);
    if (gt == std::string_view::npos) break;
    if (doc[gt - 1] == '/') {  // <Tag/>
      out.push_back(doc.substr(gt + 1, 0));
      pos = gt + 1;
      continue;
    }
    // The matching close tag, counting nested elements of the same name.
    size_t begin = gt + 1, scan = begin, end = std::string_view::npos;
    int depth = 1;
    while ((scan = doc.find('<', scan)) != std::string_view::npos) {
      if (size_t past = skip_special(doc, scan)) {
        if (past == std::string_view::npos) break;
        scan = past;
        continue;
      }
      bool close = starts(doc, scan, "</");
      if (name_at(doc, scan + (close ? 2 : 1)) == tag) {
        size_t g = doc.find('>', scan);
        if (g == std::string_view::npos) break;
        if (close && --depth == 0) {
          end = scan;
          scan = g + 1;
          break;
        }
        if (!close && doc[g - 1] != '/') ++depth;
      }
      ++scan;
    }
    if (end == std::string_view::npos) break;  // unterminated: ignored
    out.push_back(doc.substr(begin, end - begin));
    pos = scan;
  }
  return out;
}

std::optional<std::string> text(std::string_view doc, std::string_view tag) {
  auto found = elements(doc, tag);
  if (found.empty()) return std::nullopt;
  return decode(found.front());
}

std::string decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (starts(s, i, "<![CDATA[")) {
      size_t end = s.find("]]>", i + 9);
      if (end == std::string_view::npos) end = s.size();
      out.append(s.substr(i + 9, end - i - 9));
      i = end == s.size() ? end : end + 3;
    } else if (s[i] == '&') {
      size_t n = entity(s, i, out);
      if (n == 0) out += '&', n = 1;
      i += n;
    } else {
      out += s[i++];
    }
  }
  return out;
}

}  // namespace sx::s3::xml
