#include "lang/trace.h"

#include "graph/precision.h"
#include "lang/tensor.h"

namespace sx {

TracedModel trace_model(Interp& in, const LoaderDecl& loader, int64_t rows, bool training) {
  const Experiment& x = in.experiment();
  const ModelDecl& model = *x.run->model;
  TracedModel out;
  out.rows = rows;
  TraceContext ctx{&out.graph, training, static_cast<uint64_t>(x.run->seed), 0};
  TraceContext* outer = in.trace;
  in.trace = &ctx;
  struct Restore {
    Interp& in;
    TraceContext* outer;
    ~Restore() { in.trace = outer; }
  } restore{in, outer};

  std::vector<ValueP> args;
  for (const auto& name : model.inputs) {
    NodeId id;
    try {
      id = ops::input(out.graph, name, {rows, loader.seq_len}, DType::I32, model.span);
    } catch (UserError& e) {
      // An input too large to exist: its rows come from the run's :batch.
      if (e.code() == Code::SHAPE_030)
        for (const KeyArg& k : x.run->keys)
          if (k.key == "batch" && k.expr && k.expr->span.valid()) {
            e.first().span = k.expr->span;
            e.first().notes.push_back(fmt::format(
                "the model's inputs are [rows, seq-len] = [{}, {}] (:batch / :microbatches, the loader's :seq-len)",
                rows, loader.seq_len));
          }
      throw;
    }
    args.push_back(object(std::make_shared<TensorRef>(&out.graph, id), model.span));
  }
  ValueP result = in.call(object(model.fn, model.span), std::move(args), model.span);

  auto scalar_tensor = [&](const std::string& what, const ValueP& v) -> NodeId {
    auto* t = v->object<TensorRef>();
    if (!t)
      throw UserError(Code::SHAPE_010, model.span,
                      fmt::format("model `{}` must return its {} as a scalar tensor, found {} `{}`", model.name, what,
                                  type_name(*v), repr(*v)),
                      "return (cross-entropy logits targets), or (outputs :loss l ...)");
    const Node& n = out.graph.node(t->id);
    if (n.shape.rank != 0 || !is_float(n.dtype))
      throw UserError(Code::SHAPE_010, n.span.valid() ? n.span : model.span,
                      fmt::format("model `{}`: its {} must be a float scalar, found {}{}", model.name, what,
                                  dtype_name(n.dtype), n.shape.str()),
                      "reduce it, e.g. with (mean x)");
    return t->id;
  };
  if (auto* o = result->object<Outputs>()) {
    for (const auto& [name, v] : o->named) {
      NodeId id = scalar_tensor(name, v);
      if (name == "loss")
        out.loss = id;
      else
        out.metrics.emplace_back(name, id);
    }
  } else {
    out.loss = scalar_tensor("loss", result);
  }

  // Every embedding must cover the loader's vocabulary.
  int64_t vocab = loader.vocab_size();
  if (vocab > 0)
    for (NodeId id = 0; id < out.graph.size(); ++id)
      if (out.graph.node(id).op == Op::Embed) {
        const Node& n = out.graph.node(id);
        ops::check_vocab(out.graph, n.inputs[1], vocab, n.span);
      }
  return out;
}

void apply_precision(TracedModel& m, const std::string& precision) {
  if (precision != "bf16") return;
  std::vector<NodeId> map, roots{m.loss};
  for (const auto& [name, id] : m.metrics) roots.push_back(id);
  m.graph = round_products_bf16(m.graph, roots, &map);
  m.loss = map[m.loss];
  for (auto& [name, id] : m.metrics) id = map[id];
}

}  // namespace sx
