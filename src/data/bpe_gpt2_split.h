#pragma once
// GPT-2's pre-tokenizer pattern (kGpt2Pattern, as BpeRegex spells it for
// Oniguruma: \s is \p{White_Space}) matched by hand: the same matches as
// PCRE2's, at several times its speed, since this pattern is almost every
// byte-level BPE's and the pre-tokenizer is most of a cold encode.
#include <cstddef>
#include <string_view>

namespace sx::data {

// The end of the pattern's match starting at `from` (< text.size()): the
// pattern matches every code point, so a match always starts where asked.
// `text` is valid UTF-8.
size_t gpt2_match_end(std::string_view text, size_t from);

}  // namespace sx::data
