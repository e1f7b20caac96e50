// sexpgpu explain FILE [selection] [--device cpu|cuda]: the manifest, the parameters by model
// path, each graph's size and its memory plan with the largest buffers.
#include <iostream>

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
  refuse_unbuilt_devices(env);
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
  return ExitStatus::done;
}

}  // namespace sx
