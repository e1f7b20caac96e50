#define PCRE2_CODE_UNIT_WIDTH 8
#include "data/bpe_regex.h"

#include <pcre2.h>

#include <nlohmann/json.hpp>

#include "data/bpe.h"
#include "data/bpe_gpt2_split.h"
#include "util/error.h"
#include "util/utf8.h"

namespace sx::data {
namespace {

// One match-data block per thread: matching allocates nothing, and loader
// threads share a tokenizer.
pcre2_match_data* thread_match_data() {
  struct Holder {
    pcre2_match_data* md = pcre2_match_data_create(1, nullptr);
    ~Holder() { pcre2_match_data_free(md); }
  };
  thread_local Holder h;
  return h.md;
}

// Hugging Face matches with Oniguruma, whose \s is Unicode's White_Space;
// PCRE2's \s also matches U+180E. Spelling it out gives Oniguruma's matches.
std::string oniguruma_spaces(const std::string& pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\' && i + 1 < pattern.size()) {
      char c = pattern[++i];
      out += c == 's' ? "\\p{White_Space}" : c == 'S' ? "\\P{White_Space}" : std::string{'\\', c};
    } else {
      out += pattern[i];
    }
  }
  return out;
}

}  // namespace

BpeRegex::BpeRegex(const std::string& pattern, bool literal, const std::string& file, bool by_hand) {
  int err = 0;
  PCRE2_SIZE at = 0;
  // PCRE2_LITERAL refuses PCRE2_UCP ("invalid option bits"), which a literal does not need.
  uint32_t opts = PCRE2_UTF | PCRE2_NO_UTF_CHECK | (literal ? PCRE2_LITERAL : PCRE2_UCP);
  // NO_UTF_CHECK at compile time too: a bad pattern must be an error, not UB.
  if (sx::invalid_utf8_at(pattern) != std::string_view::npos)
    throw UserError(Code::DATA_050, {}, fmt::format("{}: a Split pattern is not valid UTF-8", file));
  std::string spelled = literal ? pattern : oniguruma_spaces(pattern);
  auto* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(spelled.data()), spelled.size(), opts, &err, &at, nullptr);
  if (!code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    throw UserError(Code::DATA_050, {},
                    fmt::format("{}: the pre-tokenizer's regex {} does not compile: {}", file,
                                nlohmann::json(pattern).dump(), reinterpret_cast<const char*>(msg)),
                    "sexpgpu reads Split patterns with PCRE2 (Perl syntax, \\p{...} classes, lookaround)");
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // when JIT is unavailable, the interpreter matches the same
  code_ = code;
  gpt2_ = by_hand && !literal && pattern == kGpt2Pattern;
}

BpeRegex::~BpeRegex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

bool BpeRegex::find(std::string_view text, size_t from, size_t* begin, size_t* end) const {
  if (from > text.size()) return false;
  if (gpt2_) {  // it matches every code point, never the empty string
    if (from == text.size()) return false;
    *begin = from, *end = gpt2_match_end(text, from);
    return true;
  }
  pcre2_match_data* md = thread_match_data();
  int rc = pcre2_match(static_cast<pcre2_code*>(code_), reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), from,
                       PCRE2_NO_UTF_CHECK, md, nullptr);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc < 0) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(rc, msg, sizeof msg);
    throw UserError(Code::DATA_050, {},
                    fmt::format("the tokenizer's pre-tokenizer regex failed while matching: {}",
                                reinterpret_cast<const char*>(msg)),
                    "the pattern backtracks too much on this text; simplify it");
  }
  PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
  *begin = ov[0], *end = ov[1];
  return true;
}

size_t BpeRegex::next_char_len(std::string_view text, size_t at) {
  if (at >= text.size()) return 1;
  size_t n = 1;
  while (at + n < text.size() && (static_cast<unsigned char>(text[at + n]) & 0xC0) == 0x80) ++n;
  return n;
}

}  // namespace sx::data
