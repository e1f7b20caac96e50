#pragma once
// Command-line flags: `--name value`, `--name=value` and switches, declared per
// command, with coded errors and "did you mean" for unknown flags.
#include <optional>
#include <string>
#include <vector>

#include "lang/selection.h"
#include "util/environment.h"

namespace sx {

struct FlagSpec {
  std::string name;  // "--steps"
  std::string value;  // what the value is, for help ("N"); empty: a switch
  std::string help;
  bool repeatable = false;
};

struct ParsedArgs {
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> flags;  // in order given
  bool has(const std::string& name) const;
  std::optional<std::string> last(const std::string& name) const;
};

ParsedArgs parse_args(const std::vector<std::string>& argv, const std::vector<FlagSpec>& specs,
                      const std::string& command);

// --variant, --set, --steps, --eval-every, --diagnostics
const std::vector<FlagSpec>& selection_flags();
// The selection from the flags, the environment's SEXPGPU_DIAGNOSTICS and SEXPGPU_RUN_SLUG.
Selection selection_from(const ParsedArgs& args, const Environment& env);

// The single FILE argument of a command that compiles one.
const std::string& file_argument(const ParsedArgs& args, const std::string& command);

}  // namespace sx
