#pragma once
// Runs work on a thread with a large stack. The evaluator and the reader recurse
// with the nesting of the program (up to the language's limits: 10,000 calls,
// 10,000 levels of brackets); a generous stack keeps those limits, not the
// host's 8 MiB default, the thing a deep program runs into.
#include <cstddef>
#include <functional>

namespace sx {
inline constexpr size_t kBigStackBytes = size_t{1} << 30;  // reserved, touched only as used
void run_with_big_stack(const std::function<void()>& work, size_t bytes = kBigStackBytes);
}  // namespace sx
