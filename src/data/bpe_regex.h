#pragma once
// A PCRE2 pattern in UTF + Unicode-property mode (\p{L}, lookahead: what
// Hugging Face's Oniguruma patterns use), JIT-compiled, matched over valid
// UTF-8 without checking it again at every match. GPT-2's pattern is
// matched by hand instead (bpe_gpt2_split.h) unless `by_hand` is false.
#include <cstddef>
#include <string>
#include <string_view>

namespace sx::data {

class BpeRegex {
 public:
  // Throws E-DATA-050 naming `file` when the pattern does not compile.
  BpeRegex(const std::string& pattern, bool literal, const std::string& file, bool by_hand = true);
  ~BpeRegex();
  BpeRegex(const BpeRegex&) = delete;
  BpeRegex& operator=(const BpeRegex&) = delete;
  // Calls piece(begin, end) for every match and every gap between matches
  // (Split's Isolated behaviour), in order, covering all of `text`.
  template <class F>
  void split(std::string_view text, F&& piece) const {
    size_t gap = 0, from = 0, begin = 0, end = 0;
    while (from <= text.size() && find(text, from, &begin, &end)) {
      if (end == begin) {  // an empty match splits nothing (as in Hugging Face's Split)
        from = begin + next_char_len(text, begin);
        continue;
      }
      if (begin > gap) piece(gap, begin);
      piece(begin, end);
      gap = from = end;
    }
    if (gap < text.size()) piece(gap, text.size());
  }

 private:
  bool find(std::string_view text, size_t from, size_t* begin, size_t* end) const;
  static size_t next_char_len(std::string_view text, size_t at);
  void* code_ = nullptr;
  bool gpt2_ = false;  // the pattern is kGpt2Pattern, matched by gpt2_match_end
};

}  // namespace sx::data
