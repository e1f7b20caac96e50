#define PCRE2_CODE_UNIT_WIDTH 8
#include "data/bpe_gpt2_split.h"

#include <pcre2.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "util/error.h"
#include "util/utf8.h"

namespace sx::data {
namespace {

// The pattern's alternatives, in order:
//   's|'t|'re|'ve|'m|'ll|'d | ?\p{L}+ | ?\p{N}+ | ?[^\s\p{L}\p{N}]+ | \s+(?!\S) | \s+
// so a code point is a letter, a number, a space or other; no two at once.
enum Class : uint8_t { kUnknown = 0, kLetter, kNumber, kSpace, kOther };

// Each code point's class as PCRE2's Unicode tables say (PCRE2 and utf8proc
// need not be of the same Unicode version), asked of PCRE2 the first time
// the code point is seen. Racing threads store the same value.
std::atomic<uint8_t> g_class[0x110000];

uint8_t learn(char32_t cp) {
  static pcre2_code* const classes = [] {
    const char pattern[] = R"((\p{L})|(\p{N})|(\p{White_Space}))";
    int err = 0;
    PCRE2_SIZE at = 0;
    pcre2_code* c = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), sizeof pattern - 1,
                                  PCRE2_UTF | PCRE2_UCP | PCRE2_ANCHORED, &err, &at, nullptr);
    SX_ASSERT(c, "PCRE2 does not compile the character-class pattern");
    return c;
  }();
  std::string s;
  append_utf8(s, cp);
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(classes, nullptr);
  int rc = pcre2_match(classes, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0, 0, md, nullptr);
  pcre2_match_data_free(md);
  SX_ASSERT(rc == PCRE2_ERROR_NOMATCH || (rc >= 2 && rc <= 4), "PCRE2 failed to classify a code point");
  uint8_t c = rc == 2 ? kLetter : rc == 3 ? kNumber : rc == 4 ? kSpace : kOther;
  g_class[cp].store(c, std::memory_order_relaxed);
  return c;
}

// The length of the code point at p[i] (i < n), its class in *cls. A
// truncated sequence (not valid UTF-8: the caller's fault) is other.
inline size_t char_at(const unsigned char* p, size_t n, size_t i, uint8_t* cls) {
  unsigned char b = p[i];
  char32_t cp;
  size_t len;
  if (b < 0x80) {
    cp = b, len = 1;
  } else {
    len = b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    if (i + len > n) return *cls = kOther, n - i;
    cp = b & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (p[i + k] & 0x3F);
    if (cp >= 0x110000) return *cls = kOther, len;
  }
  uint8_t c = g_class[cp].load(std::memory_order_relaxed);
  *cls = c != kUnknown ? c : learn(cp);
  return len;
}

// The end of the run of code points of class `cls` from j.
inline size_t run_end(const unsigned char* p, size_t n, size_t j, uint8_t cls) {
  while (j < n) {
    uint8_t c;
    size_t len = char_at(p, n, j, &c);
    if (c != cls) break;
    j += len;
  }
  return j;
}

}  // namespace

size_t gpt2_match_end(std::string_view text, size_t i) {
  auto p = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size();
  if (p[i] == '\'' && i + 1 < n) {  // 's 't 're 've 'm 'll 'd
    unsigned char a = p[i + 1];
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
    if (i + 2 < n) {
      unsigned char b = p[i + 2];
      if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
    }
  }
  uint8_t cls;
  if (p[i] == ' ' && i + 1 < n) {  // " ?" before a letter, number or other
    size_t len = char_at(p, n, i + 1, &cls);
    if (cls != kSpace) return run_end(p, n, i + 1 + len, cls);
  }
  size_t j = i + char_at(p, n, i, &cls);
  if (cls != kSpace) return run_end(p, n, j, cls);
  // \s+(?!\S) takes the run but its last space when a non-space follows;
  // a run of one space followed by a non-space is \s+'s.
  size_t last = i;
  while (j < n) {
    size_t len = char_at(p, n, j, &cls);
    if (cls != kSpace) break;
    last = j, j += len;
  }
  if (j == n) return n;
  return last > i ? last : j;
}

}  // namespace sx::data
