#pragma once
// Strict UTF-8 decoding of one code point (no overlong forms, surrogates or
// values above U+10FFFF), and how a code point is shown in a message.
#include <cstddef>
#include <string>

namespace sx::data {

// The length (1-4) of the code point at p, stored in *cp; 0 if invalid or truncated.
size_t decode_utf8(const unsigned char* p, size_t n, char32_t* cp);

// "'é' (U+00E9)", "'\t' (U+0009)".
std::string show_char(char32_t cp);

}  // namespace sx::data
