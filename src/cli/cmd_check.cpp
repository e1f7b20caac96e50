// sexpgpu check FILE [selection]
#include <iostream>

#include "cli/commands.h"
#include "lang/frontend.h"

namespace sx {

ExitStatus cmd_check(const ParsedArgs& args) {
  const std::string& file = file_argument(args, "check");
  Environment env = command_environment(args);
  Selection sel = selection_from(args, env);
  auto interp = load_experiment(file, sel, env.eval_limit);
  const Experiment& x = interp->experiment();
  std::cout << fmt::format("ok: {} {} knobs\n", x.slug, x.manifest.size());
  return ExitStatus::done;
}

}  // namespace sx
