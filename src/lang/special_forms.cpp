// The special forms: the calls whose arguments are not simply evaluated.
#include "lang/declarations.h"
#include "lang/interp.h"

namespace sx {

namespace {

UserError malformed(Interp& in, const Value& at, const std::string& form, const std::string& expected) {
  return in.error_here(Code::EVAL_005, at.span, fmt::format("`{}` expected {}", form, expected));
}

const std::string& symbol_name(Interp& in, const Value& v, const std::string& form, const char* what) {
  if (v.kind != Kind::Symbol) throw malformed(in, v, form, fmt::format("{}, found {} `{}`", what, type_name(v), repr(v)));
  return v.s;
}

void need(Interp& in, const Value& form, size_t min, const std::string& expected) {
  if (form.items.size() < min) throw malformed(in, form, form.items[0]->s, expected);
}

}  // namespace

Params parse_params(Interp& in, const Value& vec, const std::string& form) {
  if (vec.kind != Kind::List || !vec.bracket)
    throw malformed(in, vec, form, fmt::format("a parameter vector such as [x y :k 1], found {} `{}`", type_name(vec),
                                               repr(vec)));
  Params p;
  const auto& xs = vec.items;
  for (size_t k = 0; k < xs.size(); ++k) {
    const Value& x = *xs[k];
    if (x.kind == Kind::Keyword) {
      if (k + 1 >= xs.size())
        throw malformed(in, x, form, fmt::format("a default value after the keyword parameter `:{}`", x.s));
      p.kw.emplace_back(x.s, xs[++k]);
    } else if (x.is_symbol("&")) {
      if (k + 1 >= xs.size()) throw malformed(in, x, form, "a name after `&` for the rest of the arguments");
      if (!p.kw.empty()) throw malformed(in, x, form, "`& rest` before the keyword parameters");
      p.rest = symbol_name(in, *xs[++k], form, "a name after `&`");
    } else {
      if (!p.kw.empty() || !p.rest.empty())
        throw malformed(in, x, form, fmt::format("positional parameters first, found `{}` after a keyword or rest", repr(x)));
      p.pos.push_back(symbol_name(in, x, form, "a parameter name"));
    }
  }
  return p;
}

namespace {

// (defn name [params] body...) and (fn [params] body...) and (defmacro ...).
ValueP make_closure(Interp& in, const Value& form, const EnvP& env, size_t params_at, std::string name, bool macro) {
  size_t at = params_at;
  if (at < form.items.size() && form.items[at]->kind == Kind::String) ++at;  // a docstring
  if (at >= form.items.size())
    throw malformed(in, form, form.items[0]->s, "a parameter vector such as [x y :k 1], found none");
  auto c = in.new_closure();
  c->name = std::move(name);
  c->params = parse_params(in, *form.items[at], form.items[0]->s);
  c->body.assign(form.items.begin() + static_cast<long>(at) + 1, form.items.end());
  c->env = env;
  c->def = form.span;
  c->is_macro = macro;
  return object(c, form.span);
}

ValueP quasi(Interp& in, const ValueP& x, const EnvP& env, int depth) {
  if (x->kind != Kind::List || x->items.empty()) return x;
  const Value& head = *x->items[0];
  if ((head.is_symbol("unquote") || head.is_symbol("unquote-splicing")) && x->items.size() == 2) {
    if (depth > 1) return list({x->items[0], quasi(in, x->items[1], env, depth - 1)}, x->span);
    if (head.is_symbol("unquote-splicing"))
      throw in.error_here(Code::EVAL_009, x->span, "`,@` must stand inside a list to splice into",
                          "write `(a ,@xs) to splice xs into a list");
    return in.eval(x->items[1], env);
  }
  if (head.is_symbol("quasiquote") && x->items.size() == 2)
    return list({x->items[0], quasi(in, x->items[1], env, depth + 1)}, x->span);
  std::vector<ValueP> out;
  for (const auto& item : x->items) {
    if (depth == 1 && item->kind == Kind::List && item->items.size() == 2 &&
        item->items[0]->is_symbol("unquote-splicing")) {
      ValueP spliced = in.eval(item->items[1], env);
      if (spliced->kind == Kind::Nil) continue;
      if (spliced->kind != Kind::List)
        throw in.error_here(Code::EVAL_009, item->span,
                            fmt::format("`,@` expected a list to splice, found {}", type_name(*spliced)));
      in.charge(static_cast<int64_t>(spliced->items.size()), item->span);
      out.insert(out.end(), spliced->items.begin(), spliced->items.end());
    } else {
      out.push_back(quasi(in, item, env, depth));
    }
  }
  return list(std::move(out), x->span, x->bracket);
}

std::string scope_name(Interp& in, const ValueP& v, Span at) {
  switch (v->kind) {
    case Kind::String:
    case Kind::Symbol: return v->s;
    case Kind::Int: return std::to_string(v->i);
    default:
      throw in.error_here(Code::EVAL_004, at,
                          fmt::format("`scope` expected a string, symbol or integer name, found {}", type_name(*v)));
  }
}

}  // namespace

void register_special_forms(Interp& in) {
  in.special("quote", [](Interp& in, const Value& f, const EnvP&) {
    if (f.items.size() != 2) throw malformed(in, f, "quote", "one datum");
    return f.items[1];
  });
  in.special("quasiquote", [](Interp& in, const Value& f, const EnvP& env) {
    if (f.items.size() != 2) throw malformed(in, f, "quasiquote", "one datum");
    return quasi(in, f.items[1], env, 1);
  });
  for (const char* name : {"unquote", "unquote-splicing"}) {
    in.special(name, [name](Interp& in, const Value& f, const EnvP&) -> ValueP {
      throw in.error_here(Code::EVAL_009, f.span,
                          fmt::format("`{}` appeared outside a quasiquote", name[7] == '-' ? ",@" : ","),
                          "use it inside `( ... ) to insert values into quoted code");
    });
  }
  in.special("def", [](Interp& in, const Value& f, const EnvP& env) {
    if (f.items.size() != 3) throw malformed(in, f, "def", "a name and a value: (def name value)");
    const std::string& name = symbol_name(in, *f.items[1], "def", "a name");
    ValueP v = in.eval(f.items[2], env);
    if (auto* c = v->object<Closure>(); c && c->name.empty()) c->name = name;
    in.define(name, v);
    return v;
  });
  in.special("defn", [](Interp& in, const Value& f, const EnvP& env) {
    need(in, f, 3, "a name, a parameter vector and a body: (defn name [x] ...)");
    const std::string& name = symbol_name(in, *f.items[1], "defn", "a function name");
    ValueP c = make_closure(in, f, env, 2, name, false);
    in.define(name, c);
    return c;
  });
  in.special("defmacro", [](Interp& in, const Value& f, const EnvP& env) {
    need(in, f, 3, "a name, a parameter vector and a body: (defmacro name [x] ...)");
    const std::string& name = symbol_name(in, *f.items[1], "defmacro", "a macro name");
    ValueP c = make_closure(in, f, env, 2, name, true);
    in.define(name, c);
    return c;
  });
  in.special("fn", [](Interp& in, const Value& f, const EnvP& env) {
    need(in, f, 2, "a parameter vector and a body: (fn [x] ...)");
    return make_closure(in, f, env, 1, "", false);
  });
  in.special("let", [](Interp& in, const Value& f, const EnvP& env) {
    need(in, f, 2, "a binding vector: (let [a 1 b (+ a 1)] ...)");
    const Value& b = *f.items[1];
    if (b.kind != Kind::List || !b.bracket || b.items.size() % 2)
      throw malformed(in, b, "let", "a binding vector of name-value pairs: (let [a 1 b (+ a 1)] ...)");
    auto local = std::make_shared<Env>(env);
    for (size_t k = 0; k < b.items.size(); k += 2) {
      const std::string& name = symbol_name(in, *b.items[k], "let", "a name to bind");
      local->vars[name] = in.eval(b.items[k + 1], local);  // sequential: later values see earlier names
    }
    return in.eval_body(f.items, 2, local);
  });
  in.special("set!", [](Interp& in, const Value& f, const EnvP& env) {
    if (f.items.size() != 3) throw malformed(in, f, "set!", "a name and a value: (set! name value)");
    const std::string& name = symbol_name(in, *f.items[1], "set!", "a name");
    ValueP v = in.eval(f.items[2], env);
    for (Env* e = env.get(); e; e = e->parent.get()) {
      auto it = e->vars.find(name);
      if (it != e->vars.end()) {
        it->second = v;
        return v;
      }
    }
    throw in.error_here(Code::EVAL_001, f.items[1]->span, fmt::format("`set!` of `{}`, which is not defined", name),
                        "define it first with def or let");
  });
  in.special("if", [](Interp& in, const Value& f, const EnvP& env) {
    if (f.items.size() < 3 || f.items.size() > 4)
      throw malformed(in, f, "if", "a test, a then-branch and an optional else-branch");
    if (in.eval(f.items[1], env)->truthy()) return in.eval(f.items[2], env);
    return f.items.size() == 4 ? in.eval(f.items[3], env) : nil();
  });
  in.special("when", [](Interp& in, const Value& f, const EnvP& env) {
    need(in, f, 2, "a test and a body");
    return in.eval(f.items[1], env)->truthy() ? in.eval_body(f.items, 2, env) : nil();
  });
  in.special("cond", [](Interp& in, const Value& f, const EnvP& env) {
    if (f.items.size() % 2 == 0) throw malformed(in, f, "cond", "test-value pairs: (cond a 1 b 2 :else 3)");
    for (size_t k = 1; k < f.items.size(); k += 2)
      if (in.eval(f.items[k], env)->truthy()) return in.eval(f.items[k + 1], env);
    return nil();
  });
  in.special("and", [](Interp& in, const Value& f, const EnvP& env) {
    ValueP v = boolean(true);
    for (size_t k = 1; k < f.items.size(); ++k)
      if (!(v = in.eval(f.items[k], env))->truthy()) return v;
    return v;
  });
  in.special("or", [](Interp& in, const Value& f, const EnvP& env) {
    ValueP v = nil();
    for (size_t k = 1; k < f.items.size(); ++k)
      if ((v = in.eval(f.items[k], env))->truthy()) return v;
    return v;
  });
  in.special("do", [](Interp& in, const Value& f, const EnvP& env) { return in.eval_body(f.items, 1, env); });
  in.special("for", [](Interp& in, const Value& f, const EnvP& env) {
    need(in, f, 3, "a binding and a body: (for [i (range n)] ...)");
    const Value& b = *f.items[1];
    if (b.kind != Kind::List || !b.bracket || b.items.size() != 2)
      throw malformed(in, b, "for", "one binding: (for [i (range n)] ...)");
    const std::string& name = symbol_name(in, *b.items[0], "for", "a name to bind");
    ValueP xs = in.eval(b.items[1], env);
    if (xs->kind != Kind::List && xs->kind != Kind::Nil)
      throw in.error_here(Code::EVAL_004, b.items[1]->span,
                          fmt::format("`for` expected a list to walk, found {}", type_name(*xs)));
    std::vector<ValueP> out;
    for (const auto& x : xs->items) {
      auto local = std::make_shared<Env>(env);
      local->vars[name] = x;
      out.push_back(in.eval_body(f.items, 2, local));
    }
    return list(std::move(out), f.span);
  });
  in.special("require", [](Interp& in, const Value& f, const EnvP&) {
    if (f.items.size() != 2)
      throw malformed(in, f, "require", "one library or file: (require std/nn) or (require \"lib/gpt.sx\")");
    const Value& what = *f.items[1];
    if (what.kind == Kind::Symbol) {
      in.eval_file(what.s, what.s + ".sx", what.span);
    } else if (what.kind == Kind::String) {
      // Relative to the requiring file, not the working directory.
      const SourceFile& here = Sources::global().get(f.span.file);
      auto dir = [](const std::string& p) {
        auto slash = p.rfind('/');
        return slash == std::string::npos ? std::string() : p.substr(0, slash + 1);
      };
      bool absolute = !what.s.empty() && what.s[0] == '/';
      std::string path = absolute ? what.s : dir(here.path) + what.s;
      std::string display = absolute ? what.s : dir(here.display) + what.s;
      if (absolute) in.absolute_requires.push_back(what.s);
      in.eval_file(path, display, what.span);
    } else {
      throw malformed(in, what, "require", fmt::format("a library name or a file path string, found {}", type_name(what)));
    }
    return nil();
  });
  in.special("scope", [](Interp& in, const Value& f, const EnvP& env) {
    need(in, f, 3, "a name and a body: (scope \"attn\" ...)");
    in.scopes.push_back(scope_name(in, in.eval(f.items[1], env), f.items[1]->span));
    struct Pop {
      std::vector<std::string>& s;
      ~Pop() { s.pop_back(); }
    } pop{in.scopes};
    return in.eval_body(f.items, 2, env);
  });
}

}  // namespace sx
