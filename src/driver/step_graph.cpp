#include "driver/step_graph.h"

#include <algorithm>
#include <iostream>

#include "util/glob.h"
#include "util/memory.h"
#include "util/printable.h"
#include "util/sha256.h"

namespace sx {

namespace {

// A glob that selects nothing is most often a typo ("attn/*"): said on one
// warning line, with the names closest to it, and the run goes on.
void warn_unmatched_globs(const Graph& g, const std::vector<std::string>& globs) {
  std::vector<std::string> names = {"grad/norm", "update/ratio"};  // the optimizer's, outside the graph
  for (NodeId id = 0; id < g.size(); ++id)
    if (const Node& n = g.node(id);
        n.op == Op::Tap && std::find(names.begin(), names.end(), n.attrs.name) == names.end())
      names.push_back(n.attrs.name);
  for (const auto& glob : globs) {
    if (std::any_of(names.begin(), names.end(), [&](const std::string& n) { return diagnostic_glob_match(glob, n); }))
      continue;
    std::vector<std::string> closest = names;
    std::stable_sort(closest.begin(), closest.end(), [&](const std::string& a, const std::string& b) {
      return edit_distance(glob, a) < edit_distance(glob, b);
    });
    if (closest.size() > 3) closest.resize(3);
    std::string near = nearest(glob, names);
    std::cerr << one_line(
        fmt::format("warning: diagnostics glob `{}` matches no diagnostic of this model; {}the closest are {}\n", glob,
                    near.empty() ? "" : fmt::format("did you mean `{}`? ", near), fmt::join(closest, ", ")));
  }
}

// What a checkpoint must agree on to be resumed: the parameters' names and
// shapes, the model's operations, and the training data's order. Not the batch
// rows a microbatch has: a resume may change :microbatches.
// `one`: the model traced at one record, whatever the microbatch rows.
std::string identity_text(const Compiled& c, const TracedModel& one) {
  std::string text;
  for (const auto& p : c.params) text += p.path + " " + p.shape.str() + "\n";
  // The model's every operation, shape and parameter.
  for (const Node& n : one.graph.nodes())
    text += fmt::format("{} {}{} {} {} {} {}\n", op_name(n.op), dtype_name(n.dtype), n.shape.str(), n.path,
                        n.attrs.axis, n.attrs.value, n.attrs.causal);
  const LoaderDecl& l = *c.x->run->loader;
  text += fmt::format("loader {} {} {} seq-len {} shuffle {}\n", l.name, l.source, l.format, l.seq_len,
                      l.shuffle.value_or(true));
  return text;
}

}  // namespace

void select_diagnostics(StepGraph& s, const std::vector<std::string>& globs) {
  const Graph& g = s.traced.graph;
  if (!globs.empty())
    for (NodeId id = 0; id < g.size(); ++id) {
      const Node& n = g.node(id);
      if (n.op != Op::Tap) continue;
      for (const auto& glob : globs)
        if (diagnostic_glob_match(glob, n.attrs.name)) {
          s.taps.push_back({n.path.empty() ? n.attrs.name : n.attrs.name + "/" + n.path, id});
          break;
        }
    }
  warn_unmatched_globs(g, globs);
}

void plan_step(StepGraph& s, const std::atomic<bool>* stop) {
  s.outputs.push_back(s.traced.loss);
  for (const auto& [name, id] : s.traced.metrics) s.outputs.push_back(id);
  for (const auto& t : s.taps) s.outputs.push_back(t.node);
  for (const auto& [path, id] : s.grads.params) s.outputs.push_back(id);
  // lifetimes packed into one arena; nodes no output needs are pruned
  plan::Options options;
  options.stop = stop;
  s.plan = plan::make_plan(s.traced.graph, s.outputs, options);
}

PassGraph pass_graph(const Compiled& c, const std::shared_ptr<EvalDecl>& decl, const std::atomic<bool>* stop) {
  const RunDecl& run = *c.x->run;
  PassGraph p;
  p.decl = decl;
  p.batch = decl->batch.value_or(run.batch);
  p.step.traced = trace_model(*c.interp, *decl->loader, p.batch, /*training=*/false);
  apply_precision(p.step.traced, run.precision);
  check_same_params(c.params, p.step.traced.graph, decl->name);
  poll_stop(stop);
  plan_step(p.step, stop);
  return p;
}

std::vector<std::string> pass_metric_names(const Compiled& c, const std::string& pass) {
  std::vector<std::string> names;
  for (const auto& p : c.passes)
    if (p.decl->name == pass) {
      names.push_back("eval/loss");
      for (const auto& [metric, id] : p.step.traced.metrics) names.push_back("eval/" + metric);
    }
  return names;
}

// Everything a training step holds at once, refused before any of it is
// allocated when it cannot fit. The step's gradients are outputs of its plan,
// in the arena; with microbatches they are also summed into accumulators.
void check_fits_in_memory(const Compiled& c) {
  const RunDecl& run = *c.x->run;
  uint64_t params = static_cast<uint64_t>(c.param_count()) * 4;
  int per_param = run.optimizer->kind == "sgd" ? (run.optimizer->momentum != 0 ? 1 : 0) : 2;
  uint64_t state = params * static_cast<uint64_t>(per_param);
  uint64_t accumulators = run.microbatches > 1 ? params : 0;
  uint64_t arena = static_cast<uint64_t>(c.train.plan.arena_bytes);
  for (const auto& p : c.passes) arena += static_cast<uint64_t>(p.step.plan.arena_bytes);
  uint64_t total = params + state + accumulators + arena;
  if (total <= memory_budget()) return;
  std::string parts = fmt::format("parameters {}, optimizer state {}", bytes_text(params), bytes_text(state));
  if (accumulators) parts += fmt::format(", gradient accumulators {}", bytes_text(accumulators));
  parts += fmt::format(", plan arenas (activations and gradients) {}", bytes_text(arena));
  throw UserError(
      Code::SHAPE_031, run.span,
      fmt::format("run `{}` needs {}, more than {}: {}", run.name, bytes_text(total), memory_budget_text(), parts),
      "use a smaller model, a smaller :batch or :seq-len, or more :microbatches");
}

// The hash at every precision, so that a resume changing :precision can tell
// the model's own changes from the rounding's.
void hash_identity(Compiled& c) {
  const RunDecl& run = *c.x->run;
  const TracedModel one = trace_model(*c.interp, *run.loader, 1, /*training=*/true);
  for (const char* precision : {"f32", "bf16", "tf32"}) {
    TracedModel m = one;
    apply_precision(m, precision);
    c.graph_hashes[precision] = sha256_hex(identity_text(c, m)).substr(0, 16);
  }
  c.graph_hash = c.graph_hashes.at(run.precision);
}

}  // namespace sx
