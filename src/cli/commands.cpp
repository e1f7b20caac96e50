#include "cli/commands.h"

#include "backend/cpu/gemm.h"
#include "backend/cuda/driver/discovery.h"
#include "runtime/device_group.h"

namespace sx {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"run", "train", "run FILE|BUNDLE.sxb [selection] [--device cpu|cuda] [--metrics T] [--status P] [--json] ...",
       "compile the experiment and train it in this process", run_flags(), cmd_run},
      {"check", "front end", "check FILE|BUNDLE.sxb [selection]",
       "read, evaluate and validate the experiment without running it", selection_flags(), cmd_check},
      {"knobs",
       "front end",
       "knobs FILE|BUNDLE.sxb [--json]",
       "every knob with its type, default, doc and constraints, and every variant",
       {{"--json", "", "one JSON object for tools"}},
       cmd_knobs},
      {"explain", "plan", "explain FILE|BUNDLE.sxb [selection] [--device cpu|cuda]",
       "the manifest, parameters, graphs and the memory plan", explain_flags(), cmd_explain},
      {"sweep", "train", "sweep FILE [--set k=a,b,...] [--variant v1,v2] [--parallel N] [--dir D] [--json]",
       "one run per selection of a grid, each its own process, resumable", sweep_flags(), cmd_sweep},
      {"bundle", "front end", "bundle FILE [selection] [-o out.sxb] [--no-data]",
       "one archive that runs the same run elsewhere", bundle_flags(), cmd_bundle},
      {"watch", "-", "watch STATUS.json|RUN.jsonl [--interval S] [--once]",
       "a running run's step, loss, evals and ETA, redrawn until it ends", watch_flags(), cmd_watch},
      {"report", "-", "report RUN.jsonl...|SWEEP-DIR [-o report.html]",
       "one HTML file with the runs' curves, final metrics and knobs", report_flags(), cmd_report},
      {"doctor", "environment", "doctor", "check the build, devices, variables and locations", {}, cmd_doctor},
      {"help", "-", "help [command|code]", "explain a command or an error code", {}, cmd_help},
  };
  return table;
}

const Command* find_command(const std::string& name) {
  for (const auto& c : commands())
    if (name == c.name) return &c;
  return nullptr;
}

Environment command_environment(const ParsedArgs& args) {
  Environment env = parse_environment();
  for (const auto& [flag, value] : args.flags)
    if (flag != "--diagnostics") apply_flag(env, flag, value);
  return env;
}

void use_cpu_bf16(const Environment& env) {
  if (env.device != Device::cpu || env.cpu_bf16 != CpuBf16::amx) return;
  cpu::AmxSupport support = cpu::amx_support();
  if (support != cpu::AmxSupport::Available) {
    const char* why =
        support == cpu::AmxSupport::NoAmx ? "this CPU has no AMX-BF16"
        : support == cpu::AmxSupport::NoBf16Conversion
            ? "this CPU has no AVX512-BF16 conversions that round as :precision bf16 does (they pack the tiles' pairs)"
            : "Linux refused this process their state (arch_prctl ARCH_REQ_XCOMP_PERM)";
    throw UserError(Code::ENV_003, {}, std::string("SEXPGPU_CPU_BF16=amx asks for AMX's tiles, but ") + why,
                    "unset SEXPGPU_CPU_BF16: bf16 products then run as the definition, the same bits on every CPU, "
                    "on the bf16 units or the f32 units, whichever is faster here");
  }
  cpu::set_gemm_amx(cpu::AmxTiles::Hardware);
}

void refuse_unbuilt_devices(Environment& env) {
  if (env.device != Device::cuda) return;
  if (env.cuda_emulate) {
    env.devices = emulated_ordinals(env.cuda_emulate, env.devices);
    return;
  }
  if (!cuda::built_with_cuda())
    throw UserError(Code::DEV_001, {}, "this sexpgpu was built without CUDA", "run with --device cpu");
  std::vector<int> ordinals;
  for (const auto& d : cuda::require_cuda_devices(cuda::discovered(), env.devices)) ordinals.push_back(d.ordinal);
  env.devices = ordinals;
}

}  // namespace sx
