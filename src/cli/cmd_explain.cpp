// sexpgpu explain FILE [selection] [--device cpu|cuda]: the manifest, the parameters by model
// path, each graph's size and its memory plan with the largest buffers.
#include <iostream>

#include "backend/cuda/cuda_device_kernels.h"
#include "backend/cuda/driver/discovery.h"
#include "backend/cuda/report.h"
#include "cli/cmd_bundle.h"
#include "cli/commands.h"
#include "driver/compile.h"
#include "lang/selection.h"
#include "util/memory.h"
#include "util/printable.h"
#include "util/stop_signals.h"

namespace sx {

namespace {

void print_graph(const std::string& name, const StepGraph& s) {
  const Graph& g = s.traced.graph;
  const plan::Plan& p = s.plan;
  std::cout << one_line(fmt::format(
      "graph {}: {} nodes, {} computed, {} in place, {} views; plan {} ({} without reuse)\n", name, g.size(),
      p.schedule.size(), p.in_place, p.aliases, bytes_text(p.arena_bytes), bytes_text(p.total_bytes)));
  for (const auto& [id, bytes] : p.largest(5)) {
    const Node& n = g.node(id);
    std::string where = Sources::global().where(n.span);
    std::cout << one_line(fmt::format("  {:>10}  {} {}{} {}{}\n", bytes_text(bytes), op_name(n.op), dtype_name(n.dtype),
                                      n.shape.str(), n.path.empty() ? "-" : n.path,
                                      where.empty() ? "" : " (" + where + ")"));
  }
}

// Whether a graph reads parameters' bf16 copies (then the device keeps one of each, which the update writes).
bool reads_param_copies(const Graph& g) {
  for (const Node& n : g.nodes())
    if (n.op == Op::RoundBf16 && g.node(n.inputs[0]).op == Op::Param) return true;
  return false;
}

// What explain compiles for: the GPU of this machine, else the default.
std::string explain_arch(const Environment& env) {
  const cuda::Discovery& d = cuda::discovered();
  for (const auto& device : d.devices)
    if (env.devices.empty() || device.ordinal == env.devices.front()) return device.arch();
  return cuda::kDefaultArch;
}

struct KernelCompiling {
  const cuda::Nvrtc* nvrtc = nullptr;  // null: NVRTC is not here, kernels are not compiled
  std::string arch;
  cuda::KernelCounters tally;
};

// The CUDA lowering report of one graph (and, with SEXPGPU_EXPLAIN=kernels, its launches).
void print_lowering(const std::string& name, const StepGraph& s, const Compiled& c, const Environment& env,
                    bool training, KernelCompiling& compiling) {
  const RunDecl& run = *c.x->run;
  cuda::Precision precision = cuda::Precision::f32;
  cuda::parse_precision(run.precision, &precision);
  const Graph& g = s.traced.graph;
  cuda::Lowering l = cuda::lower(g, s.plan, precision, cuda::optimizer_info(c.params, run.optimizer.get(), training));
  cuda::DevicePlan plan = cuda::run_device_plan(g, s.plan, l, run, c.params, training);
  if (env.memory_gib)
    cuda::check_fits(g, s.plan, plan, static_cast<int64_t>(*env.memory_gib * (1ll << 30)),
                     fmt::format("SEXPGPU_MEMORY={}", *env.memory_gib), cuda::tensor_sizes(c.params));
  std::optional<cuda::CompiledLaunches> compiled;
  if (compiling.nvrtc) {
    std::vector<cuda::kir::Kernel> optimizer;
    if (training && run.optimizer) {
      bool copies = reads_param_copies(c.train.traced.graph);
      for (const auto& p : c.passes) copies = copies || reads_param_copies(p.step.traced.graph);
      optimizer = cuda::optimizer_kernels(c.params, *run.optimizer, copies);
    }
    compiled = cuda::compile_graph(*compiling.nvrtc, cuda::process_kernel_cache(), compiling.arch, l,
                                   cuda::build_calls(g, s.plan, l), optimizer, name, compiling.tally)
                   .launches;
  }
  const cuda::CompiledLaunches* code = compiled ? &*compiled : nullptr;
  std::cout << one_line(cuda::report_line(name, l, plan.total(), code));
  if (env.explain_kernels) std::cout << cuda::kernel_lines(g, l, code);
}

}  // namespace

const std::vector<FlagSpec>& explain_flags() {
  static const std::vector<FlagSpec> flags = [] {
    std::vector<FlagSpec> f = selection_flags();
    f.push_back({"--device", "cpu|cuda", "SEXPGPU_DEVICE: the device to plan for (default cpu)"});
    return f;
  }();
  return flags;
}

ExitStatus cmd_explain(const ParsedArgs& args) {
  Environment env = command_environment(args);
  ExperimentArg x = experiment_argument(args, "explain");
  // Lowering is plain C++: explain plans for cuda on any machine.
  Selection sel = selection_for(x, args, env);
  CompileOptions options = compile_options(env, StopSignals::flag());
  options.display = x.display;
  Compiled c = compile(x.file, sel, options);
  std::cout << one_line(fmt::format("experiment {} slug {} run {}\n", x.shown, c.x->slug, c.x->run->name))
            << "\nknobs:\n";
  for (const auto& k : c.x->manifest)
    std::cout << one_line(fmt::format("  {:<18} {:<10} {}\n", k.name, canonical(*k.value), k.source));
  std::cout << fmt::format("\nparameters: {} in {} tensors\n", c.param_count(), c.params.size());
  for (const auto& p : c.params)
    std::cout << one_line(fmt::format("  {:<28} {:<12} {}\n", p.path, p.shape.str(), p.shape.numel()));
  std::cout << "\n";
  print_graph("train-step", c.train);
  for (const auto& p : c.passes) print_graph(p.decl->name, p.step);
  if (env.device == Device::cuda) {
    std::cout << "\n";
    KernelCompiling compiling{cuda::nvrtc().library, explain_arch(env), {}};
    print_lowering("train-step", c.train, c, env, true, compiling);
    for (const auto& p : c.passes) print_lowering(p.decl->name, p.step, c, env, false, compiling);
  }
  return ExitStatus::done;
}

}  // namespace sx
