// The declarations (defknob, defvariant, defloader, defmodel, defrun, defeval,
// defcurriculum, defsweep), `knob`, and the builtins that make the values
// declarations take (tokenizers, optimizers, schedules).
//
// Declarations that take values keep their key expressions until the whole
// file is read: a file may declare its variants after the run that reads
// their knobs (see finalize.cpp).
#include "lang/declarations.h"

#include "lang/keys.h"
#include "lang/run_settings.h"
#include "lang/selection.h"
#include "util/printable.h"

namespace sx {

namespace {

UserError def_error(Interp& in, Code c, Span at, std::string message, std::string help = {}) {
  return in.error_here(c, at, std::move(message), std::move(help));
}

const std::string& decl_name(Interp& in, const Value& form, const char* what) {
  if (form.items.size() < 2 || form.items[1]->kind != Kind::Symbol)
    throw def_error(in, Code::EVAL_005, form.span,
                    fmt::format("`{}` expected a name first, found {}", form.items[0]->s,
                                form.items.size() < 2 ? "nothing" : type_name(*form.items[1])),
                    fmt::format("write ({} <name> ...), naming the {}", form.items[0]->s, what));
  return form.items[1]->s;
}

// The `:key value` pairs after `from`, unevaluated; refuses anything else.
std::vector<KeyArg> key_args(Interp& in, const Value& form, size_t from) {
  std::vector<KeyArg> out;
  for (size_t k = from; k < form.items.size(); k += 2) {
    const Value& key = *form.items[k];
    if (key.kind != Kind::Keyword)
      throw def_error(
          in, Code::EVAL_005, key.span,
          fmt::format("`{}` expected a `:key value` pair, found {} `{}`", form.items[0]->s, type_name(key), repr(key)));
    if (k + 1 >= form.items.size())
      throw def_error(
          in, Code::EVAL_005, key.span,
          fmt::format("`{}` expected a value after `:{}`, found the end of the form", form.items[0]->s, key.s));
    for (const auto& seen : out)
      if (seen.key == key.s) throw def_error(in, Code::DEF_001, key.span, fmt::format("`:{}` is given twice", key.s));
    out.push_back({key.s, form.items[k + 1], key.span});
  }
  return out;
}

template <typename T>
void refuse_duplicate(Interp& in, const std::vector<std::shared_ptr<T>>& have, const std::string& name, Span at,
                      const char* what) {
  for (const auto& h : have)
    if (h->name == name) {
      UserError e = def_error(in, Code::DEF_005, at, fmt::format("{} `{}` is declared twice", what, name));
      e.first().notes.push_back("first declared at " + Sources::global().where(h->span));
      throw e;
    }
}

std::vector<std::string> knob_names(const Experiment& x) {
  std::vector<std::string> names;
  for (const auto& k : x.knobs) names.push_back(k.name);
  for (const auto& r : run_setting_names()) names.push_back(r);
  return names;
}

UserError unknown_knob(Interp& in, const Experiment& x, const std::string& name, Span at) {
  auto names = knob_names(x);
  UserError e = def_error(in, Code::KNOB_001, at,
                          fmt::format("`{}` is not a knob; the knobs are {}", name, join_capped(names, ", ")),
                          did_you_mean(name, names));
  if (e.first().help.empty()) e.first().help = fmt::format("declare it with (defknob {} <default>)", name);
  return e;
}

// The default must satisfy the knob's own :choices, :min and :max: a
// declaration error (E-KNOB-006) at the default, with the constraint it breaks.
void check_default(Interp& in, const KnobDecl& k, Span at) {
  const Value& d = *k.dflt;
  auto bad = [&](const std::string& what, const std::string& help) {
    return def_error(in, Code::KNOB_006, at,
                     fmt::format("knob `{}` expected a default {}, found {}", k.name, what, canonical(d)), help);
  };
  if (!k.choices.empty() &&
      std::none_of(k.choices.begin(), k.choices.end(), [&](const ValueP& c) { return equal(*c, d); }))
    throw bad("among its :choices (" + describe_choices(k) + ")",
              fmt::format("add {} to :choices, or make the default one of them", canonical(d)));
  if (k.min && d.as_double() < k.min->as_double())
    throw bad("of at least :min " + canonical(*k.min), "raise the default or lower :min");
  if (k.max && d.as_double() > k.max->as_double())
    throw bad("of at most :max " + canonical(*k.max), "lower the default or raise :max");
}

void defknob(Interp& in, const Value& f, const EnvP& env) {
  Experiment& x = in.experiment();
  KnobDecl k;
  k.name = decl_name(in, f, "knob");
  k.span = f.span;
  if (f.items.size() < 3)
    throw def_error(in, Code::KNOB_006, f.span, fmt::format("knob `{}` expected a default value, found none", k.name),
                    fmt::format("write (defknob {} <default> :doc \"...\")", k.name));
  for (const auto& have : x.knobs)
    if (have.name == k.name) {
      UserError e = def_error(in, Code::DEF_005, f.span, fmt::format("knob `{}` is declared twice", k.name));
      e.first().notes.push_back("first declared at " + Sources::global().where(have.span));
      throw e;
    }
  if (run_setting(k.name))
    throw def_error(in, Code::KNOB_006, f.items[1]->span,
                    fmt::format("`{}` is a setting of defrun and already a knob; choose another name", k.name));
  k.dflt = in.eval(f.items[2], env);
  if (k.type().empty())
    throw def_error(in, Code::KNOB_006, f.items[2]->span,
                    fmt::format("knob `{}` expected a default of type integer, float, string, symbol or boolean, "
                                "found {}",
                                k.name, type_name(*k.dflt)));
  // A knob with a wrong key is still declared, with its default alone, so that
  // `check` goes on without an error at each of its uses.
  struct DeclareAnyway {
    Experiment& x;
    KnobDecl plain;
    bool declared = false;
    ~DeclareAnyway() {
      if (!declared) x.knobs.push_back(std::move(plain));
    }
  } anyway{x, KnobDecl{k.name, k.dflt, "", {}, nullptr, nullptr, k.span, {}}};
  for (const auto& a : key_args(in, f, 3)) {
    ValueP v = in.eval(a.expr, env);
    if (a.key == "doc") {
      if (v->kind != Kind::String)
        throw def_error(in, Code::KNOB_006, a.expr->span,
                        fmt::format("`:doc` expected a string, found {}", type_name(*v)));
      k.doc = v->s;
    } else if (a.key == "choices") {
      if (v->kind != Kind::List || v->items.empty())
        throw def_error(in, Code::KNOB_006, a.expr->span,
                        fmt::format("`:choices` expected a non-empty list, found {}", type_name(*v)));
      k.choices = v->items;
    } else if (a.key == "min") {
      k.min = v;
    } else if (a.key == "max") {
      k.max = v;
    } else {
      std::vector<std::string> keys;
      for (const auto& key : declaration_keys("defknob")) keys.push_back(":" + key);
      UserError e = def_error(in, Code::DEF_001, a.key_span,
                              fmt::format("defknob has no key `:{}`; it takes {}", a.key, fmt::join(keys, " ")));
      e.first().help = did_you_mean(":" + a.key, keys);
      throw e;
    }
  }
  KnobDecl probe = k;  // the constraints must agree with the type and admit the default
  for (const auto& c : k.choices)
    check_knob_value(KnobDecl{k.name, k.dflt, "", {}, nullptr, nullptr, k.span, {}}, c,
                     c->span.valid() ? c->span : f.span, ":choices");
  for (const ValueP& bound : {k.min, k.max})
    if (bound && (!bound->is_number() || !k.dflt->is_number()))
      throw def_error(in, Code::KNOB_006, bound->span.valid() ? bound->span : f.span,
                      fmt::format("knob `{}`: :min and :max need a number knob and number bounds", k.name));
  if (k.min && k.max && k.min->as_double() > k.max->as_double())
    throw def_error(in, Code::KNOB_006, k.max->span.valid() ? k.max->span : f.span,
                    fmt::format("knob `{}` expected :max at least :min {}, found {}", k.name, canonical(*k.min),
                                canonical(*k.max)));
  check_default(in, probe, f.items[2]->span);
  anyway.declared = true;
  x.knobs.push_back(std::move(k));
}

void defvariant(Interp& in, const Value& f, const EnvP& env) {
  Experiment& x = in.experiment();
  VariantDecl v;
  v.name = decl_name(in, f, "variant");
  v.span = f.span;
  for (const auto& have : x.variants)
    if (have.name == v.name) {
      UserError e = def_error(in, Code::DEF_005, f.span, fmt::format("variant `{}` is declared twice", v.name));
      e.first().notes.push_back("first declared at " + Sources::global().where(have.span));
      throw e;
    }
  for (auto a : key_args(in, f, 2)) {
    a.expr = in.eval(a.expr, env);  // variants hold values, not expressions
    v.sets.push_back(std::move(a));
  }
  // A knob read before this, the selected, variant existed would have missed its value.
  if (in.selection && in.selection->variant == v.name) {
    for (const auto& a : v.sets)
      for (const auto& [name, at] : in.experiment().early_knob_reads)
        if (name == a.key) {
          UserError e = def_error(
              in, Code::KNOB_001, at,
              fmt::format("knob `{}` is read here before variant `{}`, which sets it, is declared", name, v.name),
              "move the defvariant above the first use of the knob");
          e.first().notes.push_back("the variant is declared at " + Sources::global().where(v.span));
          throw e;
        }
  }
  x.variants.push_back(std::move(v));
}

void defloader(Interp& in, const Value& f, const EnvP& env) {
  auto l = std::make_shared<LoaderDecl>();
  l->name = decl_name(in, f, "loader");
  l->span = f.span;
  refuse_duplicate(in, in.experiment().loaders, l->name, f.span, "loader");
  l->keys = key_args(in, f, 2);
  l->env = env;
  in.experiment().loaders.push_back(l);
  in.define(l->name, object(l, f.span));
}

void defmodel(Interp& in, const Value& f, const EnvP& env) {
  auto m = std::make_shared<ModelDecl>();
  m->name = decl_name(in, f, "model");
  m->span = f.span;
  refuse_duplicate(in, in.experiment().models, m->name, f.span, "model");
  if (f.items.size() < 4)
    throw def_error(in, Code::EVAL_005, f.span,
                    fmt::format("`defmodel` expected inputs and a body: (defmodel {} [tokens targets] ...)", m->name));
  auto c = in.new_closure();
  c->name = m->name;
  c->params = parse_params(in, *f.items[2], "defmodel");
  if (!c->params.kw.empty() || !c->params.rest.empty())
    throw def_error(in, Code::EVAL_005, f.items[2]->span,
                    "`defmodel` expected plain input names such as [tokens targets]");
  for (const auto& name : c->params.pos)
    if (name != "tokens" && name != "targets")
      throw def_error(
          in, Code::DEF_003, f.items[2]->span,
          fmt::format("model input `{}` is not a field of a record; the fields are tokens and targets", name),
          did_you_mean(name, {"tokens", "targets"}));
  m->inputs = c->params.pos;
  c->body.assign(f.items.begin() + 3, f.items.end());
  c->env = env;
  c->def = f.span;
  m->fn = c;
  in.experiment().models.push_back(m);
  in.define(m->name, object(m, f.span));
}

void defrun(Interp& in, const Value& f, const EnvP& env) {
  Experiment& x = in.experiment();
  std::string name = decl_name(in, f, "run");
  if (x.run) {
    UserError e = def_error(in, Code::DEF_005, f.span, "a file has exactly one defrun; this is the second",
                            "move the other run to its own file, or make the difference a variant");
    e.first().notes.push_back("the first is at " + Sources::global().where(x.run->span));
    throw e;
  }
  RunDecl r;
  r.name = name;
  r.span = f.span;
  r.keys = key_args(in, f, 2);
  r.env = env;
  x.run = std::move(r);
}

void defeval(Interp& in, const Value& f, const EnvP& env) {
  auto e = std::make_shared<EvalDecl>();
  e->name = decl_name(in, f, "pass");
  e->span = f.span;
  refuse_duplicate(in, in.experiment().evals, e->name, f.span, "pass");
  e->keys = key_args(in, f, 2);
  e->env = env;
  in.experiment().evals.push_back(e);
  in.define(e->name, object(e, f.span));
}

void defcurriculum(Interp& in, const Value& f, const EnvP& env) {
  Experiment& x = in.experiment();
  if (x.curriculum_span.valid()) {
    UserError e = def_error(in, Code::DEF_005, f.span, "a file has at most one defcurriculum; this is the second");
    e.first().notes.push_back("the first is at " + Sources::global().where(x.curriculum_span));
    throw e;
  }
  if (f.items.size() < 2)
    throw def_error(in, Code::EVAL_005, f.span,
                    "`defcurriculum` expected stages: (defcurriculum (stage \"a\" ...) ...)");
  for (size_t k = 1; k < f.items.size(); ++k) {
    const Value& s = *f.items[k];
    if (s.kind != Kind::List || s.items.size() < 2 || !s.items[0]->is_symbol("stage") ||
        s.items[1]->kind != Kind::String)
      throw def_error(in, Code::EVAL_005, s.span,
                      fmt::format("`defcurriculum` expected (stage \"name\" :key value ...), found `{}`", repr(s)));
    StageDecl st;
    st.name = s.items[1]->s;
    st.span = s.span;
    st.keys = key_args(in, s, 2);
    st.env = env;
    for (const auto& prev : x.curriculum)
      if (prev.name == st.name)
        throw def_error(in, Code::DEF_005, s.span, fmt::format("stage \"{}\" is declared twice", st.name));
    x.curriculum.push_back(std::move(st));
  }
  x.curriculum_span = f.span;
}

void defsweep(Interp& in, const Value& f, const EnvP& env) {
  Experiment& x = in.experiment();
  if (x.sweep) throw def_error(in, Code::DEF_005, f.span, "a file has at most one defsweep; this is the second");
  SweepDecl s;
  s.span = f.span;
  for (const auto& a : key_args(in, f, 1)) {
    ValueP v = in.eval(a.expr, env);
    if (v->kind != Kind::List || v->items.empty())
      throw def_error(
          in, Code::DEF_003, a.expr->span,
          fmt::format("defsweep `:{}` expected a non-empty list of values, found {}", a.key, type_name(*v)));
    s.grid.emplace_back(a.key, v->items);
  }
  x.sweep = std::move(s);
}

ValueP knob_form(Interp& in, const Value& f, const EnvP&) {
  if (f.items.size() != 2 || f.items[1]->kind != Kind::Symbol)
    throw def_error(in, Code::EVAL_005, f.span, "`knob` expected one knob name: (knob lr)");
  return current_knob_value(in, f.items[1]->s, f.items[1]->span);
}

}  // namespace

KnobValue chosen_knob_value(const KnobDecl& k, const VariantDecl* variant,
                            const std::vector<std::pair<std::string, std::string>>& sets) {
  for (const auto& [name, text] : sets)
    if (name == k.name) return {k.name, parse_knob_value(k, text, "--set " + name), "override"};
  if (variant)
    for (const auto& a : variant->sets)
      if (a.key == k.name) return {k.name, a.expr, "variant"};
  return {k.name, k.dflt, "default"};
}

ValueP current_knob_value(Interp& in, const std::string& name, Span at) {
  Experiment& x = in.experiment();
  if (const KnobValue* kv = x.knob_value(name)) return kv->value;  // after finalize
  const KnobDecl* k = x.knob(name);
  if (!k) {
    if (run_setting(name))
      throw def_error(in, Code::KNOB_001, at,
                      fmt::format("`{}` is a run setting, known only once the whole file is read", name),
                      "read it inside the model, or use the value directly");
    UserError e = unknown_knob(in, x, name, at);
    e.first().message =
        fmt::format("`{}` is not declared (yet); the knobs so far are {}", name, join_capped(knob_names(x), ", "));
    throw e;
  }
  if (!in.selection) return k->dflt;
  const VariantDecl* variant = nullptr;
  if (!in.selection->variant.empty()) {
    variant = x.variant(in.selection->variant);
    // A variant declared later than this read is checked against it when it comes (defvariant).
    if (!variant) in.experiment().early_knob_reads.emplace_back(name, at);
  }
  return chosen_knob_value(*k, variant, effective_sets(*in.selection)).value;
}

void register_declarations(Interp& in) {
  // The enumerated values the language uses are names bound to themselves.
  for (const char* s : {"f32", "bf16", "tf32", "text", "tokens-u16", "tokens-u32", "jsonl", "bytes", "zeros", "ones"})
    in.define(s, symbol(s));
  auto decl = [&](const char* name, void (*fn)(Interp&, const Value&, const EnvP&)) {
    in.special(name, [fn](Interp& in, const Value& f, const EnvP& env) {
      fn(in, f, env);
      return nil();
    });
  };
  decl("defknob", defknob);
  decl("defvariant", defvariant);
  decl("defloader", defloader);
  decl("defmodel", defmodel);
  decl("defrun", defrun);
  decl("defeval", defeval);
  decl("defcurriculum", defcurriculum);
  decl("defsweep", defsweep);
  in.special("knob", knob_form);
  register_spec_builtins(in);
}

}  // namespace sx
