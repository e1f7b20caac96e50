#include "data/tokenizer.h"

#include <algorithm>

#include "data/shard_reader.h"
#include "util/error.h"
#include "util/utf8.h"

namespace sx::data {

std::shared_ptr<const BpeTokenizer> read_bpe_file(const TokenizerSpec& spec) {
  constexpr uint64_t kLimit = 1ull << 30;  // the largest real ones are tens of MB
  std::string path = spec.resolved_path.empty() ? spec.path : spec.resolved_path;
  auto r = open_shard({path, path, {}, {}});
  if (r->size() > kLimit)
    throw UserError(Code::DATA_050, {}, fmt::format("tokenizer file {} is larger than 1 GiB", path));
  return BpeTokenizer::parse(read_all(*r), path);
}

namespace {
// The declaration (bpe "file") reads its file: errors point at it, and `check` knows the vocabulary.
const bool kReaderSet = [] {
  tokenizer_file_reader() = [](TokenizerSpec& spec) {
    auto t = read_bpe_file(spec);
    spec.file_vocab = t->vocab();
    spec.file_model = t;
  };
  return true;
}();
}  // namespace

Tokenizer::Tokenizer(const TokenizerSpec& spec) {
  if (spec.kind == "bytes") {
    bytes_ = true, vocab_ = 256;
    return;
  }
  if (spec.kind == "bpe") {
    bpe_ = spec.file_model ? std::static_pointer_cast<const BpeTokenizer>(spec.file_model) : read_bpe_file(spec);
    vocab_ = bpe_->vocab();
    return;
  }
  SX_ASSERT(spec.kind == "chars", "unknown tokenizer kind " + spec.kind);
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
  if (bpe_) {
    size_t bad = invalid_utf8_at(text);
    if (bad != std::string_view::npos) fail(7, text, bad, 0, where);
    bpe_->encode(text, out);
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
