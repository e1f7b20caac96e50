#pragma once
// UTF-8, strictly (no overlong forms, surrogates or values above U+10FFFF):
// decoding one code point, encoding one, finding the first invalid byte, and
// how a code point is shown in a message. The reader, the data tokenizers and
// the S3 XML parser all use these.
#include <cstddef>
#include <string>
#include <string_view>

namespace sx {

// The length (1-4) of the code point at p, stored in *cp; 0 if invalid or truncated.
size_t decode_utf8(const unsigned char* p, size_t n, char32_t* cp);

// Appends the encoding of `cp` (a valid code point: not a surrogate, at most U+10FFFF).
void append_utf8(std::string& out, char32_t cp);

// The byte offset of the first invalid UTF-8 sequence of `s`, or npos.
size_t invalid_utf8_at(std::string_view s);

// "'é' (U+00E9)", "'\t' (U+0009)".
std::string show_char(char32_t cp);

}  // namespace sx
