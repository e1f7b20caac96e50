#pragma once
// Every exit status sexpgpu uses (spec/errors.md).
namespace sx {
enum class ExitStatus : int {
  done = 0,      // also: resumed from a checkpoint already at the last step
  failed = 1,    // failed after the first step began
  refused = 2,   // refused before the first step: usage, file, knob, compile, data, credentials, ...
  internal = 70, // an internal error: a bug in sexpgpu (EX_SOFTWARE)
  signal_base = 128,  // 128 + n: stopped by signal n
};
inline int code(ExitStatus s) { return static_cast<int>(s); }
}  // namespace sx
