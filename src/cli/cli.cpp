#include "cli/cli.h"

#include <cstdio>
#include <iostream>

#include "backend/cuda/cuda_device.h"
#include "backend/cuda/driver/real_gpu.h"
#include "cli/commands.h"
#include "lang/interp.h"
#include "lang/keys.h"
#include "util/big_stack.h"
#include "util/error.h"
#include "util/printable.h"
#include "util/stop_signals.h"
#include "util/version.h"

namespace sx {

namespace {

ExitStatus dispatch(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    ParsedArgs none;
    cmd_help(none);
    return ExitStatus::refused;
  }
  const std::string& name = argv[0];
  if (name == "--version" || name == "version") {
    std::cout << "sexpgpu " << SEXPGPU_VERSION << "\n";
    return ExitStatus::done;
  }
  if (name == "--help" || name == "-h") return cmd_help(ParsedArgs{});
  const Command* c = find_command(name);
  if (!c) {
    std::vector<std::string> names;
    for (const auto& cmd : commands()) names.push_back(cmd.name);
    UserError e(Code::CLI_001, {},
                fmt::format("`{}` is not a sexpgpu command; the commands are {}", name, fmt::join(names, ", ")));
    e.first().help = did_you_mean(name, names);
    if (e.first().help.empty()) e.first().help = "sexpgpu help lists them";
    throw e;
  }
  std::vector<std::string> rest(argv.begin() + 1, argv.end());
  // Hidden: the declarations' key table, for the test that checks docs/declarations.md against it.
  if (name == "help" && rest == std::vector<std::string>{"--keys"}) {
    std::cout << declaration_keys_dump();
    return ExitStatus::done;
  }
  for (const auto& a : rest)
    if (a == "--help" || a == "-h") return cmd_help(ParsedArgs{{name}, {}});
  ParsedArgs args = parse_args(rest, c->flags, name);
  if (!c->run)
    throw UserError(Code::CLI_004, {}, fmt::format("`sexpgpu {}` is not part of this build yet", name),
                    "sexpgpu help lists what this build does");
  return c->run(args);
}

}  // namespace

int cli_main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // `--device cuda` without SEXPGPU_CUDA_EMULATE runs on the real GPU layer (dlopen'ed driver and cuBLASLt).
  cuda::install_real_gpu([](const std::vector<int>& ordinals) { return cuda::make_real_gpu(ordinals); });
  // An emulated run compiles its kernels too (where NVRTC is found): each run checks that they compile.
  cuda::compile_on_emulated_gpu(true);
  ExitStatus status = ExitStatus::done;
  bool interrupted = false;
  // Deeply nested programs recurse deeply; see big_stack.h.
  run_with_big_stack([&] {
    try {
      status = dispatch(args);
    } catch (const Interrupted&) {
      interrupted = true;
    } catch (const UserError& e) {
      std::cerr << render(e);
      status = ExitStatus::refused;
    } catch (const InternalError& e) {
      std::cerr << one_line(e.what()) << "\n";
      status = ExitStatus::internal;
    } catch (const std::bad_alloc&) {
      std::cerr << "error: out of memory\n";
      status = ExitStatus::failed;
    }
  });
  std::cout.flush();
  // `run` answers a stopping signal itself (its summary, its status file);
  // every other command stops here, however far it got.
  bool answered = !args.empty() && args[0] == "run" && !interrupted;
  if (int sig = StopSignals::pending(); sig && !answered) {
    std::cerr << fmt::format("stopping: {} ({:.2f}s to exit)\n", StopSignals::name(sig), StopSignals::since_signal());
    return code(ExitStatus::signal_base) + sig;
  }
  return code(status);
}

}  // namespace sx
