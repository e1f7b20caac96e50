#pragma once
// The reader: .sx text to Values, each with its Span. Every malformed input is
// refused with an E-READ-* error at its position; nothing crashes the reader.
#include <string>
#include <string_view>
#include <vector>

#include "reader/value.h"

namespace sx {

inline constexpr size_t kMaxSourceBytes = 16u << 20;  // 16 MiB
inline constexpr int kMaxReadDepth = 10'000;

// Reads the file at `path` into Sources (named `display` in errors). Refuses
// a missing or unreadable file (E-READ-009, at `from` when given, the position
// that asked for it) and one over 16 MiB (E-READ-006).
int32_t load_source(const std::string& path, const std::string& display, Span from = {});

// Every datum of a registered file, in order.
std::vector<ValueP> read_all(int32_t file);

// Registers `text` as a source named `display` and reads it; for tests, fuzzing
// and the bundled std libraries.
std::vector<ValueP> read_string(std::string_view text, const std::string& display = "<string>");

}  // namespace sx
