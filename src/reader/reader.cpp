#include "reader/reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/error.h"
#include "util/utf8.h"

namespace sx {

namespace {

bool is_delimiter(char c) {
  switch (c) {
    case ' ': case '\t': case '\n': case '\r': case '\f': case '\v':
    case '(': case ')': case '[': case ']': case '{': case '}':
    case '"': case ';': case '\'': case '`': case ',':
      return true;
    default:
      return false;
  }
}

class Reader {
 public:
  explicit Reader(int32_t file) : file_(file), src_(Sources::global().get(file)), text_(src_.text) {}

  std::vector<ValueP> all() {
    if (size_t bad = invalid_utf8_at(text_); bad != std::string_view::npos) {
      while (pos_ < bad) advance();  // valid UTF-8 up to there: lines and columns count right
      throw UserError(Code::READ_004, span_from(mark()),
                      fmt::format("expected UTF-8 text, found the byte 0x{:02X}",
                                  static_cast<unsigned char>(text_[bad])),
                      "save the file as UTF-8");
    }
    std::vector<ValueP> out;
    while (true) {
      skip_atmosphere();
      if (pos_ >= text_.size()) break;
      out.push_back(datum(0));
    }
    return out;
  }

 private:
  struct Mark {
    size_t pos;
    uint32_t line, col;
  };

  Mark mark() const { return {pos_, line_, col_}; }
  Span span_from(Mark m) const {
    return Span{file_, static_cast<uint32_t>(m.pos), static_cast<uint32_t>(std::max(pos_, m.pos + 1)), m.line,
                m.col};
  }
  Span span_between(Mark m, size_t end) const {
    return Span{file_, static_cast<uint32_t>(m.pos), static_cast<uint32_t>(end), m.line, m.col};
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  void advance() {
    unsigned char c = text_[pos_++];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++col_;  // columns count code points: continuation bytes add none
    }
  }

  void skip_atmosphere() {
    while (!at_end()) {
      char c = peek();
      if (c == ';') {
        while (!at_end() && peek() != '\n') advance();
      } else if (c == '#' && peek(1) == '|') {
        block_comment();
      } else if (c == '#' && peek(1) == ';') {
        Mark m = mark();
        advance();
        advance();
        skip_atmosphere();
        if (at_end())
          throw UserError(Code::READ_007, span_from(m), "expected a datum after `#;`, found the end of the file");
        datum(0);  // read and dropped
      } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        advance();
      } else {
        return;
      }
    }
  }

  void block_comment() {
    Mark start = mark();
    advance();
    advance();
    int depth = 1;
    while (depth > 0) {
      if (at_end())
        throw UserError(Code::READ_008, span_between(start, start.pos + 2),
                        "expected `|#` to close this block comment, found the end of the file");
      if (peek() == '#' && peek(1) == '|') {
        advance();
        advance();
        if (++depth > kMaxReadDepth)
          throw UserError(Code::READ_005, span_from(start),
                          fmt::format("block comments nest deeper than {} levels", kMaxReadDepth));
      } else if (peek() == '|' && peek(1) == '#') {
        advance();
        advance();
        --depth;
      } else {
        advance();
      }
    }
  }

  // `depth`: the brackets and quotes open around the datum; a list or a
  // quote read here opens one more.
  void check_depth(int depth) {
    if (depth + 1 > kMaxReadDepth)
      throw UserError(Code::READ_005, span_from(mark()),
                      fmt::format("expected nesting of at most {} levels, found deeper", kMaxReadDepth),
                      "flatten the data, or generate it at compile time with a loop");
  }

  ValueP datum(int depth) {
    Mark m = mark();
    char c = peek();
    switch (c) {
      case '(':
      case '[': return sequence(depth);
      case ')':
      case ']':
      case '}':
        advance();
        throw UserError(Code::READ_001, span_from(m), fmt::format("found `{}` with nothing open to close", c),
                        "remove it, or add the opening bracket it belongs to");
      case '{':
        advance();
        throw UserError(Code::READ_007, span_from(m), "found `{`, which starts no datum; lists use ( ) and [ ]");
      case '"': return string_literal();
      case '\'': return quoted("quote", depth);
      case '`': return quoted("quasiquote", depth);
      case ',':
        if (peek(1) == '@') return quoted("unquote-splicing", depth, 1);
        return quoted("unquote", depth);
      case '#':
        advance();
        throw UserError(Code::READ_007, span_from(m),
                        fmt::format("expected `#;` or `#|` after `#`, found {}", describe_next()));
      default: return atom();
    }
  }

  std::string describe_next() const {
    if (at_end()) return "the end of the file";
    return fmt::format("`{}`", peek());
  }

  ValueP sequence(int depth) {
    check_depth(depth);
    Mark open = mark();
    char close = peek() == '(' ? ')' : ']';
    advance();
    std::vector<ValueP> items;
    while (true) {
      skip_atmosphere();
      if (at_end())
        throw UserError(Code::READ_001, span_between(open, open.pos + 1),
                        fmt::format("expected `{}` to close this `{}`, found the end of the file", close,
                                    text_[open.pos]),
                        fmt::format("add `{}` where the {} ends", close, close == ')' ? "list" : "vector"));
      char c = peek();
      if (c == ')' || c == ']') {
        if (c != close) {
          Mark bad = mark();
          advance();
          throw UserError(Code::READ_001, span_from(bad),
                          fmt::format("expected `{}` to close the `{}` at {}:{}, found `{}`", close,
                                      text_[open.pos], open.line, open.col, c));
        }
        advance();
        return list(std::move(items), span_between(open, pos_), close == ']');
      }
      items.push_back(datum(depth + 1));
    }
  }

  ValueP quoted(const char* name, int depth, size_t extra = 0) {
    check_depth(depth);
    Mark m = mark();
    for (size_t k = 0; k <= extra; ++k) advance();
    skip_atmosphere();
    if (at_end() || peek() == ')' || peek() == ']')
      throw UserError(Code::READ_007, span_from(m),
                      fmt::format("expected a datum after `{}`, found {}", text_.substr(m.pos, extra + 1),
                                  describe_next()));
    ValueP inner = datum(depth + 1);
    Span s = span_between(m, pos_);
    return list({symbol(name, span_between(m, m.pos + extra + 1)), inner}, s);
  }

  ValueP string_literal() {
    Mark open = mark();
    advance();
    std::string out;
    while (true) {
      if (at_end())
        throw UserError(Code::READ_002, span_between(open, open.pos + 1),
                        "expected `\"` to close this string, found the end of the file");
      char c = peek();
      if (c == '"') {
        advance();
        return string(std::move(out), span_between(open, pos_));
      }
      if (c != '\\') {
        out += c;
        advance();
        continue;
      }
      Mark esc = mark();
      advance();
      if (at_end()) continue;  // reported as unclosed above
      char e = peek();
      advance();
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case '\\': out += '\\'; break;
        case '"': out += '"'; break;
        case 'u': out += unicode_escape(esc); break;
        default:
          throw UserError(Code::READ_002, span_from(esc),
                          fmt::format("expected an escape \\n \\t \\\\ \\\" or \\u{{hex}}, found `\\{}`",
                                      std::string_view(text_.data() + esc.pos + 1, pos_ - esc.pos - 1)),
                          "write a backslash as \\\\");
      }
    }
  }

  std::string unicode_escape(Mark esc) {
    auto bad = [&](const std::string& found) {
      return UserError(Code::READ_002, span_from(esc),
                       fmt::format("expected \\u{{hex}} with 1 to 6 hex digits naming a Unicode scalar value, "
                                   "found {}",
                                   found));
    };
    if (peek() != '{') throw bad("no `{` after \\u");
    advance();
    uint32_t cp = 0;
    int digits = 0;
    while (!at_end() && std::isxdigit(static_cast<unsigned char>(peek())) && digits < 7) {
      char h = peek();
      cp = cp * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0'
                                                                                       : (std::tolower(h) - 'a' + 10));
      ++digits;
      advance();
    }
    if (peek() != '}') throw bad("no closing `}`");
    advance();
    if (digits == 0 || digits > 6) throw bad(fmt::format("{} hex digits", digits));
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) throw bad(fmt::format("U+{:X}", cp));
    std::string out;
    append_utf8(out, cp);
    return out;
  }

  ValueP atom() {
    Mark m = mark();
    while (!at_end() && !is_delimiter(peek())) advance();
    std::string_view tok(text_.data() + m.pos, pos_ - m.pos);
    Span s = span_between(m, pos_);
    SX_ASSERT(!tok.empty(), "reader: empty atom");
    if (tok[0] == ':') {
      if (tok.size() == 1) throw UserError(Code::READ_007, s, "expected a keyword name after `:`, found nothing");
      return keyword(std::string(tok.substr(1)), s);
    }
    if (tok == "true") return boolean(true, s);
    if (tok == "false") return boolean(false, s);
    if (tok == "nil") return nil(s);
    bool signed_num = (tok[0] == '-' || tok[0] == '+') && tok.size() > 1 &&
                      (std::isdigit(static_cast<unsigned char>(tok[1])) ||
                       (tok[1] == '.' && tok.size() > 2 && std::isdigit(static_cast<unsigned char>(tok[2]))));
    bool dot_num = tok[0] == '.' && tok.size() > 1 && std::isdigit(static_cast<unsigned char>(tok[1]));
    if (std::isdigit(static_cast<unsigned char>(tok[0])) || signed_num || dot_num) return number(tok, s);
    return symbol(std::string(tok), s);
  }

  ValueP number(std::string_view tok, Span s) {
    std::string clean;
    bool is_float = false;
    char prev = 0;
    for (char c : tok) {
      if (c == '_') {
        if (!std::isdigit(static_cast<unsigned char>(prev))) return malformed(tok, s);
        prev = c;
        continue;
      }
      if (c == '.' || c == 'e' || c == 'E') is_float = true;
      else if (!std::isdigit(static_cast<unsigned char>(c)) && !(c == '-' || c == '+')) return malformed(tok, s);
      clean += c;
      prev = c;
    }
    if (prev == '_') return malformed(tok, s);
    const char* b = clean.data();
    const char* e = clean.data() + clean.size();
    if (*b == '+') ++b;
    if (!is_float) {
      int64_t v = 0;
      auto r = std::from_chars(b, e, v);
      if (r.ec == std::errc::result_out_of_range)
        throw UserError(Code::READ_003, s,
                        fmt::format("expected an integer that fits in 64 bits, found {}", tok),
                        "write it as a float (with a `.0`) if an approximate value will do");
      if (r.ec != std::errc() || r.ptr != e) return malformed(tok, s);
      return integer(v, s);
    }
    double v = 0;
    auto r = std::from_chars(b, e, v, std::chars_format::general);
    if (r.ec == std::errc::result_out_of_range) {
      // from_chars reports underflow as out of range too; only overflow is an error.
      if (std::isinf(std::strtod(std::string(b, e).c_str(), nullptr)))
        throw UserError(Code::READ_003, s, fmt::format("expected a finite float, found {}", tok));
      return floating(std::strtod(std::string(b, e).c_str(), nullptr), s);
    }
    if (r.ec != std::errc() || r.ptr != e) return malformed(tok, s);
    return floating(v, s);
  }

  [[noreturn]] ValueP malformed(std::string_view tok, Span s) {
    throw UserError(Code::READ_007, s,
                    fmt::format("expected a number such as 42, -7, 1_000, 0.5 or 3e-3, found `{}`", tok),
                    "a symbol cannot start with a digit");
  }

  int32_t file_;
  const SourceFile& src_;
  std::string_view text_;
  size_t pos_ = 0;
  uint32_t line_ = 1, col_ = 1;
};

// A UTF-8 byte-order mark is not part of the text: dropping it before the file
// is registered keeps every byte offset, line, column and caret right.
std::string without_bom(std::string text) {
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  return text;
}

}  // namespace

int32_t load_source(const std::string& path, const std::string& display, Span from) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    std::vector<std::string> inside;
    for (const auto& e : std::filesystem::directory_iterator(path, ec))
      if (e.path().extension() == ".sx")
        inside.push_back((std::filesystem::path(display) / e.path().filename()).string());
    std::sort(inside.begin(), inside.end());
    if (inside.size() > 5) inside.resize(5), inside.push_back("...");
    throw UserError(Code::READ_020, from, fmt::format("expected an .sx file at {}, found a directory", display),
                    inside.empty() ? "name an .sx file; this directory holds none"
                                   : fmt::format("name an .sx file inside it: {}", fmt::join(inside, ", ")));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw UserError(Code::READ_009, from, fmt::format("expected a readable file at {}, found none", display),
                    "check the path; files are relative to the file that names them");
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size < 0)
    throw UserError(Code::READ_009, from, fmt::format("expected a readable file at {}, found a directory or "
                                                      "a file that cannot be read", display));
  if (static_cast<size_t>(size) > kMaxSourceBytes)
    throw UserError(Code::READ_006, from,
                    fmt::format("expected an .sx file of at most 16 MiB, found {} of {} bytes", display, size),
                    "keep data in loader files, not in the experiment");
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), size);
  return Sources::global().add(path, display, without_bom(std::move(text)));
}

std::vector<ValueP> read_all(int32_t file) { return Reader(file).all(); }

std::vector<ValueP> read_string(std::string_view text, const std::string& display) {
  if (text.size() > kMaxSourceBytes)
    throw UserError(Code::READ_006, {},
                    fmt::format("expected an .sx text of at most 16 MiB, found {} bytes", text.size()));
  return read_all(Sources::global().add(display, display, without_bom(std::string(text))));
}

}  // namespace sx
