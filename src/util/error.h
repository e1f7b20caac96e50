#pragma once
// Two kinds of error (as Halide's Error.h): a UserError is something the user
// can cause and fix — it has a code from errors.def, a message saying what was
// expected and what was found, a position, and help. SX_ASSERT is an internal
// invariant: when it fails, sexpgpu has a bug.
#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "util/source.h"

namespace sx {

enum class Code {
#define SX_ERROR(id, code, title, text) id,
#include "util/errors.def"
#undef SX_ERROR
};

struct CodeInfo {
  Code code;
  const char* name;   // "E-READ-001"
  const char* title;  // one line
  const char* text;   // what `sexpgpu help <code>` explains
};
const std::vector<CodeInfo>& all_codes();
const CodeInfo& code_info(Code c);
const CodeInfo* find_code(std::string_view name);  // nullptr if unknown

struct Diagnostic {
  Code code;
  std::string message;
  Span span;                        // may be invalid: no position
  std::vector<std::string> notes;   // "= <note>" lines, e.g. "in: f (a.sx:3:1) <- g (a.sx:9:1)"
  std::string help;                 // "= help: ..." line, empty when there is no fix to suggest
};

// Renders as errors.md shows: header, --> position, source line, carets, notes, help.
std::string render(const Diagnostic& d);

class UserError : public std::exception {
 public:
  explicit UserError(Diagnostic d) : diags_{std::move(d)} {}
  explicit UserError(std::vector<Diagnostic> ds) : diags_(std::move(ds)) {}
  UserError(Code c, Span span, std::string message, std::string help = {})
      : diags_{Diagnostic{c, std::move(message), span, {}, std::move(help)}} {}
  const char* what() const noexcept override { return diags_.front().message.c_str(); }
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  Diagnostic& first() { return diags_.front(); }
  Code code() const { return diags_.front().code; }

 private:
  std::vector<Diagnostic> diags_;
};

// An error with a message formatted in place:
//   throw user_error(Code::EVAL_004, span, "expected a number, found {}", kind);
template <typename... Args>
UserError user_error(Code c, Span span, fmt::format_string<Args...> f, Args&&... args) {
  return UserError(c, span, fmt::format(f, std::forward<Args>(args)...));
}

// Every diagnostic of an error, as render(d) shows each: the first
// kListShown, then "and N more errors".
std::string render(const UserError& e);

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void internal_error(const char* file, int line, const std::string& what);

// "did you mean": the candidate nearest to `name` by edit distance, or "" when
// none is close enough to be a plausible typo.
std::string nearest(std::string_view name, const std::vector<std::string>& candidates);
size_t edit_distance(std::string_view a, std::string_view b);
// "did you mean `x`? " prefix-free hint and a "known: a, b, c" list, for messages.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace sx

#define SX_ASSERT(cond, msg)                                 \
  do {                                                       \
    if (!(cond)) ::sx::internal_error(__FILE__, __LINE__, msg); \
  } while (0)
