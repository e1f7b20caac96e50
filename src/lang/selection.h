#pragma once
// The selection: --variant, --set, --steps, --eval-every, --diagnostics, and
// the slug they name.
#include <optional>
#include <string>
#include <vector>

#include "lang/experiment.h"

namespace sx {

struct Selection {
  std::string variant;  // empty: none
  std::vector<std::pair<std::string, std::string>> sets;  // KNOB=VALUE in the order given
  std::optional<int64_t> steps;
  std::optional<int64_t> eval_every;
  std::optional<std::string> diagnostics;      // --diagnostics
  std::optional<std::string> env_diagnostics;  // SEXPGPU_DIAGNOSTICS
  std::optional<std::string> slug_base;        // SEXPGPU_RUN_SLUG
};

// "KNOB=VALUE" into the selection; E-KNOB-005 when there is no "=".
void add_set(Selection& s, const std::string& text);

// The last --set of each knob, sorted by knob name (a repeated --set takes the last).
std::vector<std::pair<std::string, std::string>> effective_sets(const Selection& s);

// Parses a --set value by the type of the knob's default. An integer is accepted
// for a float knob, not the reverse. `source` names where it came from in messages.
ValueP parse_knob_value(const KnobDecl& k, const std::string& text, const std::string& source);

// Checks a value against the knob's type, :choices and :min/:max.
void check_knob_value(const KnobDecl& k, const ValueP& v, Span at, const std::string& source);

// The canonical text of a knob value (integers in decimal, floats by format_float,
// booleans true/false, strings and symbols as themselves).
std::string canonical(const Value& v);
// A knob's :choices, canonical, joined by ", ".
std::string describe_choices(const KnobDecl& k);

// `<base>[-<variant>][-<knob>=<value>...]` from the canonical values of the
// --set knobs in knob-name order; characters outside [A-Za-z0-9._=-] become `_`.
std::string make_slug(const std::string& base, const std::string& variant,
                      const std::vector<std::pair<std::string, std::string>>& sets);

// The file's stem: "examples/my-run.sx" -> "my-run".
std::string file_stem(const std::string& path);

}  // namespace sx
