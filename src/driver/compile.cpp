// The stages of compilation in their order, one line each; what each stage
// does beyond its own library's call is in driver/step_graph.cpp.
#include "driver/compile.h"

#include <algorithm>

#include "driver/step_graph.h"
#include "lang/stage_conditions.h"
#include "util/error.h"
#include "util/memory.h"

namespace sx {

int64_t Compiled::param_count() const {
  int64_t n = 0;
  for (const auto& p : params) n += p.shape.numel();
  return n;
}

CompileOptions compile_options(const Environment& env, const std::atomic<bool>* stop) {
  int gpus = env.device == Device::cuda ? std::max<int>(1, static_cast<int>(env.devices.size())) : 1;
  return {env.eval_limit, env.memory_gib, stop, env.nodes, gpus, {}};
}

namespace {
// E-NODE-009: the nearest batches below and above that divide into `shares`.
[[noreturn]] void batch_does_not_divide_over_gpus(const RunDecl& run, int gpus) {
  const int64_t shares = gpus * run.microbatches;
  const int64_t below = run.batch / shares * shares, above = below + shares;
  std::string sizes = below > 0 ? fmt::format("{} or {}", below, above) : fmt::format("{}", above);
  throw UserError(Code::NODE_009, {},
                  fmt::format("defrun `{}`: :batch {} does not divide over {} GPUs of :microbatches {} ({} x {} = {} "
                              "shares)",
                              run.name, run.batch, gpus, run.microbatches, gpus, run.microbatches, shares),
                  fmt::format("choose a :batch that is a multiple of the GPUs in SEXPGPU_DEVICES x :microbatches ({}), "
                              "or fewer GPUs",
                              sizes));
}
}  // namespace

Compiled compile(const std::string& file, const Selection& sel, const CompileOptions& options) {
  Compiled c;
  set_memory_budget_gib(options.memory_gib.value_or(0));
  // The evaluator polls the flag at every form (the tracer too: tracing is
  // evaluation), autodiff and the packer every few hundred nodes, and the
  // flag is polled between the stages.
  const std::atomic<bool>* stop = options.stop;
  // read → evaluate → declarations → selection
  c.interp = load_experiment(file, sel, options.eval_limit, stop, options.display);
  c.x = &c.interp->experiment();
  const RunDecl& run = *c.x->run;

  // The training step, on one microbatch.
  if (run.batch % (run.microbatches * options.gpus) != 0) batch_does_not_divide_over_gpus(run, options.gpus);
  if (run.batch % (run.microbatches * options.nodes) != 0)
    throw UserError(Code::NODE_005, {},
                    fmt::format("defrun `{}`: :batch {} does not divide over {} nodes of :microbatches {} ({} x {} = "
                                "{} shares)",
                                run.name, run.batch, options.nodes, run.microbatches, options.nodes, run.microbatches,
                                options.nodes * run.microbatches),
                    "choose a :batch that is a multiple of SEXPGPU_NODES x :microbatches");
  if (const int64_t shares = run.microbatches * options.nodes * options.gpus; run.batch % shares != 0)
    throw UserError(Code::NODE_005, {},
                    fmt::format("defrun `{}`: :batch {} does not divide over {} nodes of {} GPUs of :microbatches {} "
                                "({} x {} x {} = {} shares)",
                                run.name, run.batch, options.nodes, options.gpus, run.microbatches, options.nodes,
                                options.gpus, run.microbatches, shares),
                    "choose a :batch that is a multiple of SEXPGPU_NODES x the GPUs of a node x :microbatches");
  c.micro_rows = run.batch / (run.microbatches * options.nodes * options.gpus);
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
