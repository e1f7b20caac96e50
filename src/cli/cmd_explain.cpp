// sexpgpu explain FILE [selection] [--device cpu|cuda]: the manifest, the parameters by model
// path, each graph's size and its memory plan with the largest buffers.
#include <iostream>

#include "backend/cuda/report.h"
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

// The CUDA lowering report of one graph (and, with SEXPGPU_EXPLAIN=kernels, its launches).
void print_lowering(const std::string& name, const StepGraph& s, const Compiled& c, const Environment& env,
                    bool training) {
  cuda::Precision precision = cuda::Precision::f32;
  cuda::parse_precision(c.x->run->precision, &precision);
  std::vector<cuda::TensorSize> params;
  for (const auto& p : c.params) params.push_back({p.path, p.shape.numel()});
  cuda::OptimizerInfo opt;
  const auto& spec = c.x->run->optimizer;
  int state = 0;
  if (training && spec) {
    opt.present = true;
    opt.clip = spec->clip.has_value();
    opt.tensors = static_cast<int64_t>(params.size());
    for (const auto& p : params) opt.elements += p.elements;
    state = spec->kind == "sgd" ? (spec->momentum != 0) : 2;
  }
  const Graph& g = s.traced.graph;
  cuda::Lowering l = cuda::lower(g, s.plan, precision, opt);
  cuda::DevicePlan plan = cuda::device_plan(g, s.plan, l, precision, params, state, training);
  if (env.memory_gib)
    cuda::check_fits(g, s.plan, plan, static_cast<int64_t>(*env.memory_gib * (1ll << 30)),
                     fmt::format("SEXPGPU_MEMORY={}", *env.memory_gib), params);
  std::cout << one_line(cuda::report_line(name, l, plan.total()));
  if (env.explain_kernels) std::cout << cuda::kernel_lines(g, l);
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
  const std::string& file = file_argument(args, "explain");
  Environment env = command_environment(args);
  // Lowering is plain C++: explain plans for cuda on any machine.
  Selection sel = selection_from(args, env);
  Compiled c = compile(file, sel, compile_options(env, StopSignals::flag()));
  std::cout << one_line(fmt::format("experiment {} slug {} run {}\n", file, c.x->slug, c.x->run->name)) << "\nknobs:\n";
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
    print_lowering("train-step", c.train, c, env, true);
    for (const auto& p : c.passes) print_lowering(p.decl->name, p.step, c, env, false);
  }
  return ExitStatus::done;
}

}  // namespace sx
