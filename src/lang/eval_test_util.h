#pragma once
// Evaluating .sx text in the tests of the evaluator (eval_*_test.cpp).
#include <gtest/gtest.h>

#include "lang/interp.h"
#include "reader/reader.h"
#include "util/big_stack.h"

namespace sx::eval_test {

// Evaluates every form of `text` in `in` (on a big stack, as the CLI does); the last value's repr.
inline std::string run(Interp& in, std::string_view text) {
  std::string out;
  run_with_big_stack([&] {
    ValueP v = nil();
    for (const auto& form : read_string(text)) v = in.eval(form, in.globals());
    out = repr(*v);
  });
  return out;
}

inline std::string ev(std::string_view text) {
  Interp in;
  return run(in, text);
}

// The error evaluating `text` raises; a test failure when there is none.
inline UserError fails(std::string_view text, int64_t limit = 10'000'000) {
  Interp in(limit);
  try {
    run(in, text);
  } catch (const UserError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an error evaluating: " << text;
  return UserError(Code::CLI_001, Span{}, "none");
}

inline Code code(std::string_view text) { return fails(text).code(); }
inline std::string message(std::string_view text) { return fails(text).diagnostics()[0].message; }

}  // namespace sx::eval_test
