#pragma once
// Several independent errors of one file, reported together.
#include <vector>

#include "util/error.h"

namespace sx {

// At most this many diagnostics are shown; the last says how many more there were.
inline constexpr size_t kMaxReportedErrors = 20;

// The diagnostics in file order (those without a position, about the command
// line, first), capped at kMaxReportedErrors, as one UserError.
UserError in_file_order(std::vector<Diagnostic> errors);

}  // namespace sx
