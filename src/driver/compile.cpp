// The stages of compilation in their order, one line each; what each stage
// does beyond its own library's call is in driver/step_graph.cpp.
#include "driver/compile.h"

#include "driver/step_graph.h"
#include "lang/stage_conditions.h"
#include "util/memory.h"

namespace sx {

int64_t Compiled::param_count() const {
  int64_t n = 0;
  for (const auto& p : params) n += p.shape.numel();
  return n;
}

CompileOptions compile_options(const Environment& env, const std::atomic<bool>* stop) {
  return {env.eval_limit, env.memory_gib, stop};
}

Compiled compile(const std::string& file, const Selection& sel, const CompileOptions& options) {
  Compiled c;
  set_memory_budget_gib(options.memory_gib.value_or(0));
  // The evaluator polls the flag at every form (the tracer too: tracing is
  // evaluation), autodiff and the packer every few hundred nodes, and the
  // flag is polled between the stages.
  const std::atomic<bool>* stop = options.stop;
  // read → evaluate → declarations → selection
  c.interp = load_experiment(file, sel, options.eval_limit, stop);
  c.x = &c.interp->experiment();
  const RunDecl& run = *c.x->run;

  // The training step, on one microbatch.
  c.micro_rows = run.batch / run.microbatches;
  c.train.traced = trace_model(*c.interp, *run.loader, c.micro_rows, /*training=*/true);  // trace
  apply_precision(c.train.traced, run.precision);                                         // precision
  poll_stop(stop);
  c.train.grads = backward(c.train.traced.graph, c.train.traced.loss, run.model->span, stop);  // autodiff
  select_diagnostics(c.train, run.diagnostics);
  poll_stop(stop);
  plan_step(c.train, stop);  // plan
  c.params = params_of(c.train.traced.graph);

  // Each evaluation pass: its own forward graph, sharing parameters by path.
  for (const auto& e : c.x->evals) c.passes.push_back(pass_graph(c, e, stop));  // trace, precision, plan

  check_stage_conditions(*c.interp, *c.x, [&](const std::string& pass) { return pass_metric_names(c, pass); });
  check_fits_in_memory(c);
  poll_stop(stop);
  hash_identity(c);  // identity hash
  poll_stop(stop);
  // From here on the run loop answers signals at step boundaries; the
  // curriculum's :when, evaluated later, must never end in Interrupted.
  c.interp->stop_flag = nullptr;
  return c;
}

}  // namespace sx
