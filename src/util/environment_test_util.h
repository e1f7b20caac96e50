// The environment's tests' helpers: parse_environment over a map of
// variables, and the diagnostics of a parse that must fail.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "util/environment.h"
#include "util/error.h"

namespace sx::environment_test {

using Vars = std::map<std::string, std::string>;

inline Environment parse(const Vars& vars) {
  return parse_environment([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

// The rendered error of parsing `vars`; fails the test when parsing succeeds.
inline std::vector<Diagnostic> errors(const Vars& vars) {
  try {
    parse(vars);
  } catch (const UserError& e) {
    return e.diagnostics();
  }
  ADD_FAILURE() << "no error";
  return {};
}

inline std::string rendered(const Vars& vars) {
  std::string out;
  for (const auto& d : errors(vars)) out += render(d);
  return out;
}

}  // namespace sx::environment_test
