#pragma once
// For the communicators' tests: the code of the UserError a call throws.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "util/error.h"

namespace sx {

// The code `f` throws (its message into `message`); a test failure when it throws none.
inline Code code_of(const std::function<void()>& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const UserError& e) {
    if (message) *message = e.what();
    return e.code();
  }
  ADD_FAILURE() << "no UserError";
  return Code::NODE_001;
}

}  // namespace sx
