// sexpgpu run FILE [selection] [--device] [--metrics] [--status] [--checkpoint-dir] [--resume] [--json]
#include <fmt/ranges.h>

#include "cli/cmd_bundle.h"
#include "cli/commands.h"
#include "runtime/communicator.h"
#include "runtime/metrics_syvain.h"
#include "runtime/session.h"
#include "s3/client.h"
#include "util/stop_signals.h"

namespace sx {

const std::vector<FlagSpec>& run_flags() {
  static const std::vector<FlagSpec> flags = [] {
    std::vector<FlagSpec> f = selection_flags();
    for (const auto& s : settings())  // the flags that win over their variable
      if (s.flag_kind == FlagKind::alias) f.push_back({std::string(s.flag), std::string(s.flag_value), flag_help(s)});
    f.push_back({"--json", "", "the final summary as one JSON object on standard output"});
    return f;
  }();
  return flags;
}

ExitStatus cmd_run(const ParsedArgs& args) {
  // First, so that a stopping signal at any later moment is answered cleanly.
  StopSignals::install();
  RunRequest req;
  req.file = file_argument(args, "run");
  req.env = command_environment(args);
  check_requirements(req.env);
  // Before compilation: a key or folder the service refuses is refused here (exit 2).
  if (req.env.metrics && req.env.metrics->kind == MetricsTarget::Kind::syvain) report::syvain_preflight(req.env);
  // The two roles' clients, for s3:// data and checkpoints. A stopping signal
  // abandons a data read in flight (the run stops before its first step); a
  // checkpoint write goes on, since it is the one kept on the way out.
  s3::set_credentials(req.env.s3_data, StopSignals::flag());
  s3::set_credentials(req.env.s3_checkpoint);
  refuse_unbuilt_devices(req.env);
  use_cpu_bf16(req.env);
  ExperimentArg x = experiment_argument(args, "run");  // a bundle: extracted until the run ends
  if (x.bundle) bundle::check_s3_objects(x.bundle->manifest(), x.shown);
  req.file = x.file;
  req.shown = x.shown;
  req.display = x.display;
  if (req.env.nodes > 1 && !have_gloo())
    throw UserError(
        Code::NODE_001, {},
        fmt::format("SEXPGPU_NODES is {}: this sexpgpu was built without Gloo and cannot run across nodes",
                    req.env.nodes),
        "rebuild with libgloo-dev installed, or unset SEXPGPU_NODES (or set it to 1) to train on this machine alone");
  req.selection = selection_for(x, args, req.env);
  req.json = args.has("--json");
  return static_cast<ExitStatus>(run_session(req));
}

}  // namespace sx
