#include "runtime/compile.h"

#include <openssl/evp.h>

#include <algorithm>
#include <iostream>

#include "lang/stage_conditions.h"
#include "util/memory.h"
#include "util/printable.h"

namespace sx {

int64_t Compiled::param_count() const {
  int64_t n = 0;
  for (const auto& p : params) n += p.shape.numel();
  return n;
}

bool diagnostic_match(std::string_view g, std::string_view t) {
  if (g.empty()) return t.empty();
  if (g[0] == '*') {
    for (size_t k = 0; k <= t.size(); ++k) {
      if (diagnostic_match(g.substr(1), t.substr(k))) return true;
      if (k < t.size() && t[k] == '/') break;  // a star stays within its segment
    }
    return false;
  }
  return !t.empty() && (g[0] == '?' ? t[0] != '/' : g[0] == t[0]) && diagnostic_match(g.substr(1), t.substr(1));
}

namespace {

std::string sha256_hex(const std::string& text, size_t chars) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), md, &len, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < len && hex.size() < chars; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

// The taps the diagnostics selection names, as "<name>/<model path>".
std::vector<SelectedTap> selected_taps(const Graph& g, const std::vector<std::string>& globs) {
  std::vector<SelectedTap> out;
  if (globs.empty()) return out;
  for (NodeId id = 0; id < g.size(); ++id) {
    const Node& n = g.node(id);
    if (n.op != Op::Tap) continue;
    for (const auto& glob : globs)
      if (diagnostic_match(glob, n.attrs.name)) {
        out.push_back({n.path.empty() ? n.attrs.name : n.attrs.name + "/" + n.path, id});
        break;
      }
  }
  return out;
}

// A glob that selects nothing is most often a typo ("attn/*"): said on one
// warning line, with the names closest to it, and the run goes on.
void warn_unmatched_globs(const Graph& g, const std::vector<std::string>& globs) {
  std::vector<std::string> names = {"grad/norm", "update/ratio"};  // the optimizer's, outside the graph
  for (NodeId id = 0; id < g.size(); ++id)
    if (const Node& n = g.node(id);
        n.op == Op::Tap && std::find(names.begin(), names.end(), n.attrs.name) == names.end())
      names.push_back(n.attrs.name);
  for (const auto& glob : globs) {
    if (std::any_of(names.begin(), names.end(), [&](const std::string& n) { return diagnostic_match(glob, n); }))
      continue;
    std::vector<std::string> closest = names;
    std::stable_sort(closest.begin(), closest.end(), [&](const std::string& a, const std::string& b) {
      return edit_distance(glob, a) < edit_distance(glob, b);
    });
    if (closest.size() > 3) closest.resize(3);
    std::string near = nearest(glob, names);
    std::cerr << one_line(fmt::format(
        "warning: diagnostics glob `{}` matches no diagnostic of this model; {}the closest are {}\n", glob,
        near.empty() ? "" : fmt::format("did you mean `{}`? ", near), fmt::join(closest, ", ")));
  }
}

void add_outputs(StepGraph& s, const std::atomic<bool>* stop) {
  s.outputs.push_back(s.traced.loss);
  for (const auto& [name, id] : s.traced.metrics) s.outputs.push_back(id);
  for (const auto& t : s.taps) s.outputs.push_back(t.node);
  for (const auto& [path, id] : s.grads.params) s.outputs.push_back(id);
  // planner: lifetimes packed into one arena; nodes no output needs are pruned
  plan::Options options;
  options.stop = stop;
  s.plan = plan::make_plan(s.traced.graph, s.outputs, options);
}

// What a checkpoint must agree on to be resumed: the parameters' names and
// shapes, the model's operations, and the training data's order. Not the batch
// rows a microbatch has: a resume may change :microbatches.
// `one`: the model traced at one record, whatever the microbatch rows.
std::string identity_text(Compiled& c, const TracedModel& one) {
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

}  // namespace

Compiled compile(const std::string& file, const Selection& sel, const Environment& env,
                 const std::atomic<bool>* stop_flag) {
  Compiled c;
  set_memory_budget_gib(env.memory_gib.value_or(0));
  // The evaluator polls the flag at every form (the tracer too: tracing is
  // evaluation), autodiff and the packer every few hundred nodes, and the
  // flag is polled between the passes.
  auto poll = [&] { poll_stop(stop_flag); };
  // reader → evaluator → declarations → selection
  c.interp = load_experiment(file, sel, env.eval_limit, stop_flag);
  c.x = &c.interp->experiment();
  const RunDecl& run = *c.x->run;

  // tracer: the training step's forward graph, on one microbatch
  c.micro_rows = run.batch / run.microbatches;
  c.train.traced = trace_model(*c.interp, *run.loader, c.micro_rows, /*training=*/true);
  apply_precision(c.train.traced, run.precision);
  poll();
  // autodiff: the backward of the mean loss
  c.train.grads = backward(c.train.traced.graph, c.train.traced.loss, run.model->span, stop_flag);
  c.train.taps = selected_taps(c.train.traced.graph, run.diagnostics);
  warn_unmatched_globs(c.train.traced.graph, run.diagnostics);
  poll();
  add_outputs(c.train, stop_flag);
  c.params = params_of(c.train.traced.graph);

  // each evaluation pass: its own forward graph, sharing parameters by path
  for (const auto& e : c.x->evals) {
    PassGraph p;
    p.decl = e;
    p.batch = e->batch.value_or(run.batch);
    p.step.traced = trace_model(*c.interp, *e->loader, p.batch, /*training=*/false);
    apply_precision(p.step.traced, run.precision);
    check_same_params(c.params, p.step.traced.graph, e->name);
    poll();
    add_outputs(p.step, stop_flag);
    c.passes.push_back(std::move(p));
  }
  // The curriculum's conditions read the metrics of the passes just traced.
  check_stage_conditions(*c.interp, *c.x, [&](const std::string& pass) {
    std::vector<std::string> names;
    for (const auto& p : c.passes)
      if (p.decl->name == pass) {
        names.push_back("eval/loss");
        for (const auto& [metric, id] : p.step.traced.metrics) names.push_back("eval/" + metric);
      }
    return names;
  });
  check_fits_in_memory(c);
  poll();
  // The hash at every precision, so that a resume changing :precision can
  // tell the model's own changes from the rounding's.
  const TracedModel one = trace_model(*c.interp, *run.loader, 1, /*training=*/true);
  for (const char* precision : {"f32", "bf16", "tf32"}) {
    TracedModel m = one;
    apply_precision(m, precision);
    c.graph_hashes[precision] = sha256_hex(identity_text(c, m), 16);
  }
  c.graph_hash = c.graph_hashes.at(run.precision);
  poll();
  // From here on the run loop answers signals at step boundaries; the
  // curriculum's :when, evaluated later, must never end in Interrupted.
  c.interp->stop_flag = nullptr;
  return c;
}

}  // namespace sx
