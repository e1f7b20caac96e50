// sexpgpu check FILE [selection]: read, evaluate, trace and plan without
// opening a device.
#include <iostream>

#include "cli/commands.h"
#include "driver/compile.h"
#include "util/printable.h"
#include "util/stop_signals.h"

namespace sx {

ExitStatus cmd_check(const ParsedArgs& args) {
  const std::string& file = file_argument(args, "check");
  Environment env = command_environment(args);
  Selection sel = selection_from(args, env);
  Compiled c = compile(file, sel, compile_options(env, StopSignals::flag()));
  std::cout << one_line(fmt::format("ok: {} {} parameters, {} nodes, plan {}\n", c.x->slug, c.param_count(),
                                    c.train.traced.graph.size(), c.train.plan.arena_bytes));
  return ExitStatus::done;
}

}  // namespace sx
