// The tensor operations of the language (spec: "Tensors and the graph"). Each
// builtin checks its .sx arguments, then calls a graph constructor, which
// checks shapes and reports at the call's position.
#include <cmath>

#include "lang/declarations.h"
#include "lang/tensor.h"

namespace sx {

std::string TensorRef::repr() const {
  const Node& n = graph->node(id);
  return fmt::format("#<tensor {}{}>", dtype_name(n.dtype), n.shape.str());
}

namespace {

TraceContext& tracing(Interp& in, const Args& a) {
  if (!in.trace)
    throw UserError(Code::EVAL_004, a.call,
                    fmt::format("`{}` is a tensor operation, and tensors exist only inside a model", a.fn_name),
                    "call it from the body of defmodel (or a function the model calls)");
  // Nodes made now belong to the innermost scope.
  in.trace->graph->scope = fmt::format("{}", fmt::join(in.scopes, "."));
  return *in.trace;
}

// A tensor argument, or a number made into a scalar constant.
NodeId tensor_arg(Interp& in, const Args& a, const ValueP& v, Span at) {
  TraceContext& t = tracing(in, a);
  if (auto* r = v->object<TensorRef>()) {
    if (r->graph != t.graph)
      throw UserError(Code::EVAL_004, at, fmt::format("`{}` got a tensor of another trace", a.fn_name),
                      "tensors cannot be kept between model calls; make them inside the model");
    return r->id;
  }
  if (v->is_number()) return ops::scalar(*t.graph, v->as_double(), DType::F32, at);
  throw UserError(Code::EVAL_004, at, fmt::format("`{}` expected a tensor, found {} `{}`", a.fn_name, type_name(*v),
                                                  repr(*v)));
}

NodeId tensor_at(Interp& in, const Args& a, size_t k) {
  if (k >= a.size())
    throw UserError(Code::EVAL_003, a.call, fmt::format("`{}` expected a tensor as argument {}, found nothing",
                                                        a.fn_name, k + 1));
  return tensor_arg(in, a, a[k], a.span_of(k));
}

ValueP wrap(Interp& in, NodeId id, Span at) {
  return object(std::make_shared<TensorRef>(in.trace->graph, id), at);
}

std::vector<int64_t> dims_of(const Args& a, const ValueP& v, Span at) {
  std::vector<int64_t> out;
  if (v->kind == Kind::List || v->kind == Kind::Nil) {
    for (const auto& d : v->items) {
      if (d->kind != Kind::Int)
        throw UserError(Code::EVAL_004, d->span.valid() ? d->span : at,
                        fmt::format("`{}` expected a shape of integers, found {} `{}`", a.fn_name, type_name(*d),
                                    repr(*d)));
      out.push_back(d->i);
    }
    return out;
  }
  throw UserError(Code::EVAL_004, at,
                  fmt::format("`{}` expected a shape such as [8 16], found {}", a.fn_name, type_name(*v)));
}

int kw_axis(const Args& a, int dflt) {
  ValueP v = a.get("axis");
  if (!v) return dflt;
  if (v->kind != Kind::Int)
    throw UserError(Code::EVAL_004, v->span.valid() ? v->span : a.call,
                    fmt::format("`{}` expected an integer :axis, found {}", a.fn_name, type_name(*v)));
  return static_cast<int>(v->i);
}

bool kw_bool(const Args& a, const char* key, bool dflt) {
  ValueP v = a.get(key);
  if (!v) return dflt;
  if (v->kind != Kind::Bool)
    throw UserError(Code::EVAL_004, v->span.valid() ? v->span : a.call,
                    fmt::format("`{}` expected :{} true or false, found {}", a.fn_name, key, repr(*v)));
  return v->b;
}

double kw_num(const Args& a, const char* key, double dflt) {
  ValueP v = a.get(key);
  if (!v) return dflt;
  if (!v->is_number())
    throw UserError(Code::EVAL_004, v->span.valid() ? v->span : a.call,
                    fmt::format("`{}` expected a number for :{}, found {}", a.fn_name, key, type_name(*v)));
  return v->as_double();
}

int64_t int_arg(const Args& a, size_t k) { return arg_int(a, k); }

DType dtype_of(const Args& a, const ValueP& v, Span at) {
  std::string name = v->kind == Kind::Symbol || v->kind == Kind::String ? v->s : "";
  if (name == "f32" || name == "tf32") return DType::F32;
  if (name == "bf16") return DType::BF16;
  if (name == "i32") return DType::I32;
  if (name == "bool") return DType::Bool;
  throw UserError(Code::EVAL_004, at,
                  fmt::format("`{}` expected a dtype (f32, bf16, i32, bool), found `{}`", a.fn_name, repr(*v)));
}

using Unary = NodeId (*)(Graph&, NodeId, Span);

// A name that computes on numbers and traces on tensors.
void unary_math(Interp& in, const char* name, Op op, double (*num)(double)) {
  const ValueP* existing = in.globals()->find(name);
  ValueP numeric = existing ? *existing : nullptr;
  in.builtin(name, [op, num, numeric](Interp& in, Args& a) -> ValueP {
    if (any_tensor(a)) {
      a.expect(1, 1);
      return wrap(in, ops::unary(*tracing(in, a).graph, op, tensor_at(in, a, 0), a.call), a.call);
    }
    if (numeric) return in.apply(numeric, a);
    a.expect(1, 1);
    double r = num(arg_number(a, 0));
    if (!std::isfinite(r))
      throw UserError(Code::EVAL_006, a.call, fmt::format("`{}` of {} is not a finite number", a.fn_name,
                                                          format_float(arg_number(a, 0))));
    return floating(r, a.call);
  });
}

// A reduction: over :axis, or over every axis when none is given.
void reduction(Interp& in, const char* name, Op op) {
  const ValueP* existing = in.globals()->find(name);
  ValueP numeric = existing ? *existing : nullptr;
  in.builtin(name, [op, numeric](Interp& in, Args& a) -> ValueP {
    if (numeric && !any_tensor(a)) return in.apply(numeric, a);
    a.expect(1, 1, {"axis", "keep"});
    Graph& g = *tracing(in, a).graph;
    NodeId x = tensor_at(in, a, 0);
    bool keep = kw_bool(a, "keep", false);
    if (!a.get("axis")) {
      if (op == Op::Sum) return wrap(in, ops::sum_all(g, x, a.call), a.call);
      if (op == Op::Mean) return wrap(in, ops::mean_all(g, x, a.call), a.call);
      x = ops::reshape(g, x, {-1}, a.call);  // every axis at once: flatten, reduce the one left
      return wrap(in, ops::reduce(g, op, x, 0, false, a.call), a.call);
    }
    return wrap(in, ops::reduce(g, op, x, kw_axis(a, -1), keep, a.call), a.call);
  });
}

}  // namespace

bool any_tensor(const Args& a) {
  for (const auto& v : a.pos)
    if (v->object<TensorRef>()) return true;
  return false;
}

ValueP tensor_arith(Interp& in, Op op, Args& a) {
  Graph& g = *tracing(in, a).graph;
  if (a.size() == 0) throw UserError(Code::EVAL_003, a.call, fmt::format("`{}` expected operands", a.fn_name));
  NodeId acc = tensor_at(in, a, 0);
  if (a.size() == 1) {
    if (op == Op::Sub) return wrap(in, ops::neg(g, acc, a.call), a.call);
    if (op == Op::Div) return wrap(in, ops::div(g, ops::scalar(g, 1.0, DType::F32, a.call), acc, a.call), a.call);
    return a[0];
  }
  for (size_t k = 1; k < a.size(); ++k) acc = ops::binary(g, op, acc, tensor_at(in, a, k), a.call);
  return wrap(in, acc, a.call);
}

void register_tensor_builtins(Interp& in) {
  // Arithmetic traces when any operand is a tensor.
  for (auto [name, op] : {std::pair{"+", Op::Add}, {"-", Op::Sub}, {"*", Op::Mul}, {"/", Op::Div},
                          {"pow", Op::Pow}, {"maximum", Op::Maximum}, {"minimum", Op::Minimum}}) {
    const ValueP* existing = in.globals()->find(name);
    ValueP numeric = existing ? *existing : nullptr;
    Op o = op;
    std::string n = name;
    in.builtin(name, [o, numeric, n](Interp& in, Args& a) -> ValueP {
      if (any_tensor(a)) return tensor_arith(in, o, a);
      if (numeric) return in.apply(numeric, a);
      // maximum / minimum of numbers
      a.expect(2, 2);
      double x = arg_number(a, 0), y = arg_number(a, 1);
      bool first = n == "maximum" ? x >= y : x <= y;
      return first ? a[0] : a[1];
    });
  }
  unary_math(in, "neg", Op::Neg, [](double x) { return -x; });
  unary_math(in, "exp", Op::Exp, [](double x) { return std::exp(x); });
  unary_math(in, "log", Op::Log, [](double x) { return std::log(x); });
  unary_math(in, "sqrt", Op::Sqrt, [](double x) { return std::sqrt(x); });
  unary_math(in, "rsqrt", Op::Rsqrt, [](double x) { return 1 / std::sqrt(x); });
  unary_math(in, "sin", Op::Sin, [](double x) { return std::sin(x); });
  unary_math(in, "cos", Op::Cos, [](double x) { return std::cos(x); });
  unary_math(in, "tanh", Op::Tanh, [](double x) { return std::tanh(x); });
  unary_math(in, "sigmoid", Op::Sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); });
  unary_math(in, "relu", Op::Relu, [](double x) { return x > 0 ? x : 0.0; });
  unary_math(in, "gelu", Op::Gelu, [](double x) {
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  });
  unary_math(in, "silu", Op::Silu, [](double x) { return x / (1 + std::exp(-x)); });
  unary_math(in, "abs", Op::Abs, [](double x) { return std::fabs(x); });
  reduction(in, "sum", Op::Sum);
  reduction(in, "mean", Op::Mean);
  reduction(in, "max", Op::Max);
  reduction(in, "logsumexp", Op::LogSumExp);
  reduction(in, "argmax", Op::Argmax);

  in.builtin("normal", [](Interp&, Args& a) {
    a.expect(1, 1);
    auto s = std::make_shared<InitSpec>();
    s->init = {Init::Normal, arg_number(a, 0), 0};
    return object(s, a.call);
  });
  in.builtin("uniform", [](Interp&, Args& a) {
    a.expect(2, 2);
    auto s = std::make_shared<InitSpec>();
    s->init = {Init::Uniform, arg_number(a, 0), arg_number(a, 1)};
    return object(s, a.call);
  });
  in.builtin("param", [](Interp& in, Args& a) {
    a.expect(2, 2, {"init"});
    Graph& g = *tracing(in, a).graph;
    std::string name = a[0]->kind == Kind::String || a[0]->kind == Kind::Symbol ? a[0]->s : "";
    if (name.empty())
      throw UserError(Code::EVAL_004, a.span_of(0), "`param` expected a name string such as \"w\"");
    Init init{Init::Normal, 0.02, 0};  // GPT-2's default
    if (ValueP i = a.get("init")) {
      if (auto* s = i->object<InitSpec>()) init = s->init;
      else if (i->is_symbol("zeros")) init = {Init::Zeros, 0, 0};
      else if (i->is_symbol("ones")) init = {Init::Ones, 0, 0};
      else
        throw UserError(Code::EVAL_004, i->span.valid() ? i->span : a.call,
                        fmt::format("`param` expected :init (normal std), (uniform a b), zeros or ones, found `{}`",
                                    repr(*i)));
    }
    std::string path = g.scope.empty() ? name : g.scope + "." + name;
    return wrap(in, ops::param(g, path, dims_of(a, a[1], a.span_of(1)), init, a.call), a.call);
  });
  in.builtin("full", [](Interp& in, Args& a) {
    a.expect(2, 2, {"dtype"});
    Graph& g = *tracing(in, a).graph;
    DType d = a.get("dtype") ? dtype_of(a, a.get("dtype"), a.call) : DType::F32;
    return wrap(in, ops::full(g, dims_of(a, a[0], a.span_of(0)), arg_number(a, 1), d, a.call), a.call);
  });
  in.builtin("arange", [](Interp& in, Args& a) {
    a.expect(1, 1);
    return wrap(in, ops::arange(*tracing(in, a).graph, int_arg(a, 0), DType::I32, a.call), a.call);
  });
  in.builtin("cast", [](Interp& in, Args& a) {
    a.expect(2, 2);
    NodeId x = tensor_at(in, a, 0);
    return wrap(in, ops::cast(*in.trace->graph, x, dtype_of(a, a[1], a.span_of(1)), a.call), a.call);
  });
  in.builtin("shape", [](Interp& in, Args& a) {
    a.expect(1, 1);
    NodeId x = tensor_at(in, a, 0);
    std::vector<ValueP> dims;
    for (int64_t d : in.trace->graph->node(x).shape.vec()) dims.push_back(integer(d, a.call));
    return list(std::move(dims), a.call);
  });
  in.builtin("matmul", [](Interp& in, Args& a) {
    a.expect(2, 2);
    NodeId x = tensor_at(in, a, 0), y = tensor_at(in, a, 1);
    return wrap(in, ops::matmul(*in.trace->graph, x, y, a.call), a.call);
  });
  in.builtin("where", [](Interp& in, Args& a) {
    a.expect(3, 3);
    NodeId c = tensor_at(in, a, 0), x = tensor_at(in, a, 1), y = tensor_at(in, a, 2);
    return wrap(in, ops::where(*in.trace->graph, c, x, y, a.call), a.call);
  });
  in.builtin("reshape", [](Interp& in, Args& a) {
    a.expect(2, 2);
    NodeId x = tensor_at(in, a, 0);
    return wrap(in, ops::reshape(*in.trace->graph, x, dims_of(a, a[1], a.span_of(1)), a.call), a.call);
  });
  in.builtin("transpose", [](Interp& in, Args& a) {
    a.expect(1, 1);
    return wrap(in, ops::transpose(*tracing(in, a).graph, tensor_at(in, a, 0), a.call), a.call);
  });
  in.builtin("permute", [](Interp& in, Args& a) {
    a.expect(2, 2);
    NodeId x = tensor_at(in, a, 0);
    std::vector<int> perm;
    for (int64_t d : dims_of(a, a[1], a.span_of(1))) perm.push_back(static_cast<int>(d));
    return wrap(in, ops::permute(*in.trace->graph, x, perm, a.call), a.call);
  });
  in.builtin("slice", [](Interp& in, Args& a) {
    // (slice x :axis a :start s :end e), or positionally (slice x axis start end)
    a.expect(1, 4, {"axis", "start", "end"});
    NodeId x = tensor_at(in, a, 0);
    const Shape& s = in.trace->graph->node(x).shape;
    int axis = a.size() > 1 ? static_cast<int>(int_arg(a, 1)) : kw_axis(a, 0);
    int64_t start = a.size() > 2 ? int_arg(a, 2) : static_cast<int64_t>(kw_num(a, "start", 0));
    int norm = axis < 0 ? axis + s.rank : axis;
    int64_t len = norm >= 0 && norm < s.rank ? s[norm] : 0;
    int64_t end = a.size() > 3 ? int_arg(a, 3) : static_cast<int64_t>(kw_num(a, "end", static_cast<double>(len)));
    return wrap(in, ops::slice(*in.trace->graph, x, axis, start, end, a.call), a.call);
  });
  const ValueP* list_concat = in.globals()->find("concat");
  ValueP join_lists = list_concat ? *list_concat : nullptr;
  in.builtin("concat", [join_lists](Interp& in, Args& a) {
    // (concat [a b] :axis k) joins tensors; on lists it is the list builtin.
    bool tensors = a.get("axis") || (a.size() == 1 && a[0]->kind == Kind::List && !a[0]->items.empty() &&
                                     a[0]->items[0]->object<TensorRef>());
    if (!tensors && join_lists) return in.apply(join_lists, a);
    a.expect(1, 1, {"axis"});
    std::vector<NodeId> xs;
    for (const auto& v : arg_list(a, 0)) xs.push_back(tensor_arg(in, a, v, v->span.valid() ? v->span : a.call));
    if (xs.empty()) throw UserError(Code::EVAL_006, a.span_of(0), "`concat` expected at least one tensor");
    return wrap(in, ops::concat(*in.trace->graph, xs, kw_axis(a, 0), a.call), a.call);
  });
  in.builtin("split", [](Interp& in, Args& a) {
    // (split x n :axis a) into n equal parts, or (split x [sizes] :axis a)
    a.expect(2, 2, {"axis"});
    NodeId x = tensor_at(in, a, 0);
    Graph& g = *in.trace->graph;
    std::vector<NodeId> parts = a[1]->kind == Kind::Int
                                    ? ops::split_n(g, x, a[1]->i, kw_axis(a, -1), a.call)
                                    : ops::split(g, x, dims_of(a, a[1], a.span_of(1)), kw_axis(a, -1), a.call);
    std::vector<ValueP> out;
    for (NodeId p : parts) out.push_back(wrap(in, p, a.call));
    return list(std::move(out), a.call);
  });
  in.builtin("gather", [](Interp& in, Args& a) {
    a.expect(2, 2, {"axis"});
    NodeId x = tensor_at(in, a, 0), ids = tensor_at(in, a, 1);
    return wrap(in, ops::gather(*in.trace->graph, x, ids, kw_axis(a, 0), a.call), a.call);
  });
  in.builtin("softmax", [](Interp& in, Args& a) {
    a.expect(1, 1, {"axis"});
    return wrap(in, ops::softmax(*tracing(in, a).graph, tensor_at(in, a, 0), kw_axis(a, -1), a.call), a.call);
  });
  in.builtin("log-softmax", [](Interp& in, Args& a) {
    a.expect(1, 1, {"axis"});
    return wrap(in, ops::log_softmax(*tracing(in, a).graph, tensor_at(in, a, 0), kw_axis(a, -1), a.call), a.call);
  });
  in.builtin("layer-norm", [](Interp& in, Args& a) {
    a.expect(3, 3, {"eps"});
    NodeId x = tensor_at(in, a, 0), gain = tensor_at(in, a, 1), bias = tensor_at(in, a, 2);
    return wrap(in, ops::layer_norm(*in.trace->graph, x, gain, bias, kw_num(a, "eps", 1e-5), a.call), a.call);
  });
  in.builtin("rms-norm", [](Interp& in, Args& a) {
    a.expect(2, 2, {"eps"});
    NodeId x = tensor_at(in, a, 0), gain = tensor_at(in, a, 1);
    return wrap(in, ops::rms_norm(*in.trace->graph, x, gain, kw_num(a, "eps", 1e-5), a.call), a.call);
  });
  in.builtin("attention", [](Interp& in, Args& a) {
    a.expect(3, 3, {"causal", "scale"});
    NodeId q = tensor_at(in, a, 0), k = tensor_at(in, a, 1), v = tensor_at(in, a, 2);
    return wrap(in, ops::attention(*in.trace->graph, q, k, v, kw_bool(a, "causal", true), kw_num(a, "scale", 0),
                                   a.call),
                a.call);
  });
  in.builtin("embed", [](Interp& in, Args& a) {
    a.expect(2, 2);
    NodeId ids = tensor_at(in, a, 0), table = tensor_at(in, a, 1);
    return wrap(in, ops::embed(*in.trace->graph, ids, table, a.call), a.call);
  });
  in.builtin("cross-entropy", [](Interp& in, Args& a) {
    a.expect(2, 2);
    NodeId logits = tensor_at(in, a, 0), targets = tensor_at(in, a, 1);
    return wrap(in, ops::cross_entropy(*in.trace->graph, logits, targets, a.call), a.call);
  });
  in.builtin("accuracy", [](Interp& in, Args& a) {
    a.expect(2, 2);
    NodeId logits = tensor_at(in, a, 0), targets = tensor_at(in, a, 1);
    return wrap(in, ops::accuracy(*in.trace->graph, logits, targets, a.call), a.call);
  });
  in.builtin("dropout", [](Interp& in, Args& a) {
    a.expect(2, 2);
    TraceContext& t = tracing(in, a);
    NodeId x = tensor_at(in, a, 0);
    double p = arg_number(a, 1);
    uint32_t stream = t.dropout_sites++;  // counted in eval traces too, so sites keep their streams
    if (!t.training) return a[0];
    return wrap(in, ops::dropout(*t.graph, x, p, t.seed, stream, a.call), a.call);
  });
  in.builtin("stop-gradient", [](Interp& in, Args& a) {
    a.expect(1, 1);
    return wrap(in, ops::stop_gradient(*tracing(in, a).graph, tensor_at(in, a, 0), a.call), a.call);
  });
  in.builtin("tap", [](Interp& in, Args& a) {
    a.expect(2, 2);
    const std::string& name = arg_string(a, 0);
    NodeId x = tensor_at(in, a, 1);
    ops::tap(*in.trace->graph, name, x, a.call);
    return a[1];  // a tap observes; the model goes on with x
  });
  in.builtin("outputs", [](Interp& in, Args& a) {
    (void)in;
    if (a.size() != 0)
      throw UserError(Code::EVAL_003, a.span_of(0), "`outputs` takes only keywords: (outputs :loss l :accuracy a)");
    auto o = std::make_shared<Outputs>();
    for (size_t k = 0; k < a.kw.size(); ++k) {
      if (!a.kw[k].second->object<TensorRef>())
        throw UserError(Code::EVAL_004, a.kw_spans[k],
                        fmt::format("`outputs` expected :{} to be a scalar tensor, found {}", a.kw[k].first,
                                    type_name(*a.kw[k].second)));
      o->named.push_back(a.kw[k]);
    }
    if (o->named.empty() || o->named.front().first != "loss")
      throw UserError(Code::EVAL_003, a.call, "`outputs` expected :loss first, then other scalar metrics",
                      "write (outputs :loss l :accuracy a)");
    return object(o, a.call);
  });
}

}  // namespace sx
