#include "data/tokenizer.h"

#include <algorithm>

#include "util/error.h"
#include "util/utf8.h"

namespace sx::data {

Tokenizer::Tokenizer(const TokenizerSpec& spec) {
  if (spec.kind == "bytes") {
    bytes_ = true, vocab_ = 256;
    return;
  }
  if (spec.kind != "chars")
    throw UserError(Code::DATA_011, {}, fmt::format("the {} tokenizer is not supported yet", spec.kind),
                    "use (chars \"...\") or bytes, or pre-tokenize the data into tokens-u16 or tokens-u32");
  ascii_.fill(-1);
  auto p = reinterpret_cast<const unsigned char*>(spec.alphabet.data());
  size_t n = spec.alphabet.size();
  for (size_t i = 0; i < n;) {
    char32_t cp;
    size_t len = decode_utf8(p + i, n - i, &cp);
    if (len == 0)
      throw UserError(Code::DATA_015, {}, fmt::format("the (chars ...) alphabet is not valid UTF-8 at byte {}", i));
    if (id_of(cp) < 0) (cp < 128 ? ascii_[cp] : other_[cp]) = static_cast<int32_t>(vocab_);  // first wins
    ++vocab_, i += len;
  }
  if (vocab_ == 0) throw UserError(Code::DATA_015, {}, "the (chars ...) alphabet is empty");
  if (spec.unknown) {
    const std::string& u = *spec.unknown;
    char32_t cp;
    size_t len = decode_utf8(reinterpret_cast<const unsigned char*>(u.data()), u.size(), &cp);
    if (len == 0 || len != u.size() || id_of(cp) < 0)
      throw UserError(Code::DATA_015, {},
                      fmt::format("(chars ... :unknown \"{}\") must be one character of the alphabet", u));
    unknown_ = id_of(cp);
  }
}

int32_t Tokenizer::id_of(char32_t cp) const {
  if (cp < 128) return ascii_[cp];
  auto it = other_.find(cp);
  return it == other_.end() ? -1 : it->second;
}

void Tokenizer::fail(int code, std::string_view text, size_t at, char32_t cp, const TextWhere& w) const {
  // Line and column (in characters) of byte `at`; invalid bytes count as one character each.
  int64_t line = 1, col = 1;
  auto p = reinterpret_cast<const unsigned char*>(text.data());
  for (size_t i = 0; i < at;) {
    char32_t c;
    size_t len = decode_utf8(p + i, text.size() - i, &c);
    if (len == 0) len = 1, c = 0xFFFD;
    if (c == '\n')
      ++line, col = 1;
    else
      ++col;
    i += len;
  }
  std::string where =
      w.jsonl_line > 0 ? fmt::format("{}:{}: field \"{}\", line {} column {}", w.file, w.jsonl_line, w.field, line, col)
                       : fmt::format("{}:{}:{}", w.file, line, col);
  if (code == 7)
    throw UserError(Code::DATA_007, {}, fmt::format("{}: invalid UTF-8 (byte 0x{:02X})", where, p[at]),
                    "fix the file's encoding, or read it with :tokenizer bytes");
  throw UserError(Code::DATA_006, {}, fmt::format("{}: character {} is not in the alphabet", where, show_char(cp)),
                  "add it to the (chars \"...\") alphabet, or map unknown characters with :unknown \"?\"");
}

void Tokenizer::encode(std::string_view text, const TextWhere& where, std::vector<int32_t>& out) const {
  auto p = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size();
  if (bytes_) {
    out.insert(out.end(), p, p + n);
    return;
  }
  // Called once per jsonl line: an exact reserve each time would copy the
  // whole sequence every call (quadratic in the source); doubling keeps it linear.
  if (out.capacity() - out.size() < n) out.reserve(std::max(out.size() + n, 2 * out.capacity()));
  for (size_t i = 0; i < n;) {
    if (p[i] < 128 && ascii_[p[i]] >= 0) {
      out.push_back(ascii_[p[i++]]);
      continue;
    }
    char32_t cp;
    size_t len = decode_utf8(p + i, n - i, &cp);
    if (len == 0) fail(7, text, i, 0, where);
    int32_t id = id_of(cp);
    if (id < 0) id = unknown_;
    if (id < 0) fail(6, text, i, cp, where);
    out.push_back(id);
    i += len;
  }
}

}  // namespace sx::data
