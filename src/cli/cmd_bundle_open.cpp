// A bundle given to run, check, explain or knobs: checked and extracted into
// a private folder under the temporary directory, removed when the command
// ends; the command then reads the extracted experiment as it would a file.
#include <filesystem>
#include <iostream>

#include "cli/cmd_bundle.h"
#include "util/printable.h"
#include "util/version.h"

namespace sx {

ExperimentArg experiment_argument(const ParsedArgs& args, const std::string& command) {
  ExperimentArg x;
  x.file = x.shown = file_argument(args, command);
  if (!x.file.ends_with(".sxb")) return x;
  std::error_code ec;
  std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
  x.bundle = bundle::extract(x.shown, ec ? std::string("/tmp") : tmp.string());
  const bundle::Manifest& m = x.bundle->manifest();
  if (m.made_by != SEXPGPU_VERSION)
    std::cerr << one_line(
        fmt::format("warning: {} was made by sexpgpu {}; this is sexpgpu {}\n", x.shown, m.made_by, SEXPGPU_VERSION));
  x.file = x.bundle->experiment_path();
  x.display = x.shown + ":" + (m.folder.empty() ? "" : m.folder + "/") + m.experiment;
  return x;
}

Selection selection_for(const ExperimentArg& x, const ParsedArgs& args, const Environment& env) {
  Selection s = selection_from(args, env);
  if (!x.bundle) return s;
  const Selection& b = x.bundle->manifest().selection;
  if (!args.has("--variant")) s.variant = b.variant;
  std::vector<std::pair<std::string, std::string>> sets = b.sets;
  sets.insert(sets.end(), s.sets.begin(), s.sets.end());
  s.sets = std::move(sets);
  if (!s.steps) s.steps = b.steps;
  if (!s.eval_every) s.eval_every = b.eval_every;
  if (!s.diagnostics) s.diagnostics = b.diagnostics;
  if (!s.slug_base) s.slug_base = b.slug_base;
  return s;
}

}  // namespace sx
