#pragma once
// The subcommands, in one table (as ninja's Tool): name, phase, summary, flags, entry.
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/exit_status.h"

namespace sx {

struct Command {
  const char* name;
  const char* phase;    // how far down the pipeline it goes
  const char* usage;    // "check FILE [selection]"
  const char* summary;  // one line
  std::vector<FlagSpec> flags;
  ExitStatus (*run)(const ParsedArgs& args);  // nullptr: not in this build yet
};

const std::vector<Command>& commands();
const Command* find_command(const std::string& name);

ExitStatus cmd_run(const ParsedArgs& args);
const std::vector<FlagSpec>& run_flags();
ExitStatus cmd_check(const ParsedArgs& args);
ExitStatus cmd_knobs(const ParsedArgs& args);
ExitStatus cmd_explain(const ParsedArgs& args);
const std::vector<FlagSpec>& explain_flags();
ExitStatus cmd_sweep(const ParsedArgs& args);
const std::vector<FlagSpec>& sweep_flags();
ExitStatus cmd_bundle(const ParsedArgs& args);
const std::vector<FlagSpec>& bundle_flags();
ExitStatus cmd_doctor(const ParsedArgs& args);
ExitStatus cmd_watch(const ParsedArgs& args);
const std::vector<FlagSpec>& watch_flags();
ExitStatus cmd_report(const ParsedArgs& args);
const std::vector<FlagSpec>& report_flags();
ExitStatus cmd_help(const ParsedArgs& args);

// The environment with the flags that alias variables applied.
Environment command_environment(const ParsedArgs& args);

// E-DEV-001 for a device this build does not have (cuda), from --device or SEXPGPU_DEVICE.
// With --device cuda, the GPUs the run trains on, checked (E-DEV-00x) and
// written into env.devices in rank order: SEXPGPU_DEVICES, or all visible.
void refuse_unbuilt_devices(Environment& env);
// SEXPGPU_CPU_BF16=amx on the CPU: refused (E-ENV-003) where the CPU has no
// AMX-BF16 tiles to use, else the CPU's bf16 products go to them.
void use_cpu_bf16(const Environment& env);

}  // namespace sx
