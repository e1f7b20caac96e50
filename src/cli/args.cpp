#include "cli/args.h"

#include <charconv>

#include "util/error.h"

namespace sx {

bool ParsedArgs::has(const std::string& name) const {
  for (const auto& [k, v] : flags)
    if (k == name) return true;
  return false;
}

std::optional<std::string> ParsedArgs::last(const std::string& name) const {
  std::optional<std::string> out;
  for (const auto& [k, v] : flags)
    if (k == name) out = v;
  return out;
}

ParsedArgs parse_args(const std::vector<std::string>& argv, const std::vector<FlagSpec>& specs,
                      const std::string& command) {
  ParsedArgs out;
  for (size_t k = 0; k < argv.size(); ++k) {
    const std::string& a = argv[k];
    bool short_flag = false;  // `-o`, when the command declares it
    for (const auto& s : specs) short_flag |= s.name == a && a.rfind("--", 0) != 0;
    if (!short_flag && (a.size() < 2 || a.rfind("--", 0) != 0)) {
      if (a.size() > 1 && a[0] == '-' && !(a[1] >= '0' && a[1] <= '9'))
        throw UserError(Code::CLI_002, {}, fmt::format("`sexpgpu {}` has no flag `{}`", command, a),
                        "flags are written --name; see `sexpgpu help " + command + "`");
      out.positional.push_back(a);
      continue;
    }
    std::string name = a, value;
    bool inline_value = false;
    if (auto eq = a.find('='); eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      inline_value = true;
    }
    const FlagSpec* spec = nullptr;
    for (const auto& s : specs)
      if (s.name == name) spec = &s;
    if (!spec) {
      std::vector<std::string> names;
      for (const auto& s : specs) names.push_back(s.name);
      UserError e(Code::CLI_002, {},
                  fmt::format("`sexpgpu {}` has no flag `{}`; it takes {}", command, name,
                              names.empty() ? "none" : fmt::format("{}", fmt::join(names, " "))));
      e.first().help = did_you_mean(name, names);
      throw e;
    }
    if (spec->value.empty()) {
      if (inline_value) throw UserError(Code::CLI_002, {}, fmt::format("`{}` takes no value, found `{}`", name, value));
    } else if (!inline_value) {
      if (k + 1 >= argv.size())
        throw UserError(Code::CLI_002, {},
                        fmt::format("`{}` expected a value ({}), found the end of the line", name, spec->value));
      value = argv[++k];
    }
    if (!spec->repeatable && out.has(name))
      throw UserError(Code::CLI_002, {}, fmt::format("`{}` is given twice", name), "give it once");
    out.flags.emplace_back(name, value);
  }
  return out;
}

const std::vector<FlagSpec>& selection_flags() {
  static const std::vector<FlagSpec> flags = [] {
    std::vector<FlagSpec> f = {
        {"--variant", "NAME", "a variant declared with defvariant"},
        {"--set", "KNOB=VALUE", "a knob's value, over the variant's and the default (repeatable)", true},
        {"--steps", "N", "replaces defrun :steps; recorded as knob steps, source override"},
        {"--eval-every", "N", "replaces every pass's :every; 0 leaves only the pass after the last step"},
    };
    for (const auto& s : settings())  // --diagnostics
      if (s.flag_kind == FlagKind::selection)
        f.push_back({std::string(s.flag), std::string(s.flag_value), flag_help(s)});
    return f;
  }();
  return flags;
}

namespace {
int64_t count_flag(const ParsedArgs& args, const char* name, int64_t min) {
  auto text = args.last(name);
  int64_t v = 0;
  auto r = std::from_chars(text->data(), text->data() + text->size(), v);
  if (r.ec != std::errc() || r.ptr != text->data() + text->size() || v < min)
    throw UserError(Code::CLI_002, {},
                    fmt::format("`{}` expected an integer of at least {}, found `{}`", name, min, *text));
  return v;
}
}  // namespace

Selection selection_from(const ParsedArgs& args, const Environment& env) {
  Selection s;
  if (auto v = args.last("--variant")) s.variant = *v;
  for (const auto& [k, v] : args.flags)
    if (k == "--set") add_set(s, v);
  if (args.has("--steps")) s.steps = count_flag(args, "--steps", 1);
  if (args.has("--eval-every")) s.eval_every = count_flag(args, "--eval-every", 0);
  if (auto d = args.last("--diagnostics")) {
    bool empty_item = d->empty() || d->front() == ',' || d->back() == ',' || d->find(",,") != std::string::npos;
    if (empty_item)
      throw UserError(Code::CLI_020, {},
                      fmt::format("`--diagnostics` expected comma-separated globs such as attention/* or "
                                  "attention/*,logits/*, found `{}`{}",
                                  *d, d->empty() ? " (empty)" : ", which has an empty item"),
                      "to compute no diagnostics, leave --diagnostics out");
    s.diagnostics = *d;
  }
  if (env.diagnostics) s.env_diagnostics = fmt::format("{}", fmt::join(*env.diagnostics, ","));
  s.slug_base = env.run_slug;
  return s;
}

const std::string& file_argument(const ParsedArgs& args, const std::string& command) {
  if (args.positional.size() != 1)
    throw UserError(
        Code::CLI_002, {},
        fmt::format("`sexpgpu {}` expected one experiment file, found {}", command,
                    args.positional.empty() ? std::string("none") : fmt::format("{}", fmt::join(args.positional, " "))),
        fmt::format("sexpgpu {} my-run.sx", command));
  return args.positional[0];
}

}  // namespace sx
