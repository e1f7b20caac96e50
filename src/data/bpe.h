#pragma once
// A byte-level BPE tokenizer read from a Hugging Face tokenizer.json (GPT-2
// and its descendants). What it supports, and nothing approximately:
//   normalizer    null, NFC, NFKC, or a Sequence of them (utf8proc)
//   pre_tokenizer ByteLevel (GPT-2's regex unless use_regex is false), or
//                 Sequence[Split(Regex|String, Isolated)..., ByteLevel]
//   model         BPE: vocab, merges ("a b" strings or ["a","b"] pairs), ignore_merges
//   added_tokens  split out of the text before anything else (leftmost, longest)
// decoder, post_processor, truncation and padding do not change the ids of a
// corpus and are not read. Anything else is refused when the file is read.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "data/bpe_tables.h"

namespace sx::data {

class BpeRegex;  // a compiled PCRE2 pattern (bpe_regex.h)

struct BpeAddedToken {
  std::string content;
  int32_t id = 0;
  bool normalized = false;  // matched in the normalized text, not the raw one
};

class BpeTokenizer {
 public:
  // `json` is the file's text, `name` how errors call the file. Throws
  // E-DATA-050 (not a tokenizer.json, or inconsistent) or E-DATA-051 (a
  // component this version does not support, named).
  // `plain` (for tests): PCRE2 for every pattern and no word cache, the
  // slow ways the fast ones must agree with.
  static std::shared_ptr<const BpeTokenizer> parse(std::string_view json, const std::string& name, bool plain = false);
  ~BpeTokenizer();

  int64_t vocab() const { return vocab_; }
  // A hash of everything that decides the ids (for caches of tokenized data).
  const std::string& fingerprint() const { return fingerprint_; }
  // Appends the ids of `text`, which must be valid UTF-8 (the caller checks).
  // Safe to call from several threads at once.
  void encode(std::string_view text, std::vector<int32_t>& out) const;

 private:
  BpeTokenizer();
  friend class BpeReader;
  enum class Norm { nfc, nfkc };

  void encode_segment(std::string_view raw, std::vector<int32_t>& out) const;  // between added tokens
  struct Words;  // pre-tokens waiting for their ids, their cache slots fetched meanwhile (bpe.cpp)
  void encode_pretokens(std::string_view text, size_t stage, Words& words) const;
  void encode_word(std::string_view bytes, const BpeWordCache::Key* key, std::vector<int32_t>& out) const;
  void merge(std::vector<int32_t>& ids) const;

  int64_t vocab_ = 0;
  std::string fingerprint_;
  std::vector<Norm> normalizers_;
  std::vector<std::unique_ptr<BpeRegex>> splits_;  // applied in order, each piece split again
  bool add_prefix_space_ = false;
  bool ignore_merges_ = false;
  std::vector<BpeAddedToken> raw_tokens_, normalized_tokens_;
  std::unordered_map<std::string, int32_t> vocab_ids_;  // byte-level strings -> id
  int32_t byte_id_[256]{};
  std::string byte_char_[256];  // the byte-to-character map, as UTF-8
  BpeMerges merges_;
  bool plain_ = false;                   // parse(..., plain)
  std::unique_ptr<BpeWordCache> cache_;  // null when plain
};

// GPT-2's pre-tokenizer regex, used by ByteLevel when use_regex is true.
extern const char* const kGpt2Pattern;

}  // namespace sx::data
