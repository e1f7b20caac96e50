#pragma once
// Tokenizers: (chars "alphabet" :unknown "?") — one id per code point of the
// alphabet, in order —, bytes (ids 0-255) and (bpe "tokenizer.json") (bpe.h).
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "data/bpe.h"
#include "lang/experiment.h"

namespace sx::data {

// Where a piece of text sits, so errors can name it: a text file (line and
// column counted from the start of `text`), or one jsonl line's field.
struct TextWhere {
  std::string file;
  int64_t jsonl_line = 0;  // > 0: the text is the `field` string of this jsonl line
  std::string field;
};

// Reads and parses a (bpe ...) tokenizer's file (local or s3://).
std::shared_ptr<const BpeTokenizer> read_bpe_file(const TokenizerSpec& spec);

class Tokenizer {
 public:
  // Throws E-DATA-015 (a bad alphabet or :unknown); for bpe, reads its file
  // unless the declaration did (E-DATA-001/013/050/051).
  explicit Tokenizer(const TokenizerSpec& spec);
  int64_t vocab() const { return vocab_; }
  const BpeTokenizer* bpe() const { return bpe_.get(); }
  // Appends the ids of `text`. Throws E-DATA-006 (a character outside the
  // alphabet) or E-DATA-007 (invalid UTF-8), naming the position.
  void encode(std::string_view text, const TextWhere& where, std::vector<int32_t>& out) const;

 private:
  int32_t id_of(char32_t cp) const;  // -1 when not in the alphabet
  [[noreturn]] void fail(int code, std::string_view text, size_t at, char32_t cp, const TextWhere& w) const;

  std::shared_ptr<const BpeTokenizer> bpe_;
  bool bytes_ = false;
  int64_t vocab_ = 0;
  std::array<int32_t, 128> ascii_{};
  std::unordered_map<char32_t, int32_t> other_;
  int32_t unknown_ = -1;
};

}  // namespace sx::data
