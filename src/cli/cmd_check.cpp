// sexpgpu check FILE [selection]: read, evaluate, trace and plan without
// opening a device.
#include <iostream>

#include "cli/cmd_bundle.h"
#include "cli/commands.h"
#include "driver/compile.h"
#include "util/printable.h"
#include "util/stop_signals.h"

namespace sx {

ExitStatus cmd_check(const ParsedArgs& args) {
  Environment env = command_environment(args);
  ExperimentArg x = experiment_argument(args, "check");
  Selection sel = selection_for(x, args, env);
  CompileOptions options = compile_options(env, StopSignals::flag());
  options.display = x.display;
  Compiled c = compile(x.file, sel, options);
  std::cout << one_line(fmt::format("ok: {} {} parameters, {} nodes, plan {}\n", c.x->slug, c.param_count(),
                                    c.train.traced.graph.size(), c.train.plan.arena_bytes));
  return ExitStatus::done;
}

}  // namespace sx
