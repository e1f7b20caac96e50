// A curriculum stage's :when is evaluated by the run, after a pass, with the
// pass's metrics bound. A name it reads that is not bound then would fail the
// run after its first pass; check_stage_conditions finds it at compile time.
#include "lang/stage_conditions.h"

#include <algorithm>

#include "util/printable.h"

namespace sx {

namespace {

// Walks a :when without evaluating it (its `and`s and `if`s depend on values
// only the run has) and returns the first symbol it would look up that is
// neither bound then nor defined. Names bound inside the condition (let, fn,
// for) count as defined wherever they appear, and a macro call is not looked
// into: both err towards accepting.
struct UnboundFinder {
  const Interp& in;
  const EnvP& env;
  const std::vector<std::string>& bound;
  std::vector<std::string> local;

  void collect_binders(const Value& form) {
    if (form.kind != Kind::List || form.items.empty()) return;
    const Value& head = *form.items[0];
    auto add_names = [&](const Value& v, size_t step) {
      if (v.kind == Kind::List)
        for (size_t k = 0; k < v.items.size(); k += step)
          if (v.items[k]->kind == Kind::Symbol) local.push_back(v.items[k]->s);
    };
    if (form.items.size() > 1 && (head.is_symbol("let") || head.is_symbol("for"))) add_names(*form.items[1], 2);
    if (form.items.size() > 1 && head.is_symbol("fn")) add_names(*form.items[1], 1);
    bool defines =
        head.is_symbol("def") || head.is_symbol("defn") || head.is_symbol("defmacro") || head.is_symbol("set!");
    if (form.items.size() > 1 && defines && form.items[1]->kind == Kind::Symbol) local.push_back(form.items[1]->s);
    if (form.items.size() > 2 && (head.is_symbol("defn") || head.is_symbol("defmacro"))) add_names(*form.items[2], 1);
    for (const auto& item : form.items) collect_binders(*item);
  }

  bool known(const std::string& name) const {
    return env->find(name) || in.is_special(name) || std::find(bound.begin(), bound.end(), name) != bound.end() ||
           std::find(local.begin(), local.end(), name) != local.end();
  }

  const Value* first_unbound(const Value& form) const {
    if (form.kind == Kind::Symbol) return known(form.s) ? nullptr : &form;
    if (form.kind != Kind::List || form.items.empty()) return nullptr;
    const Value& head = *form.items[0];
    // Forms whose arguments are names, not expressions: (knob lr), (require std/nn).
    if (head.is_symbol("quote") || head.is_symbol("quasiquote") || head.is_symbol("knob") || head.is_symbol("require"))
      return nullptr;
    if (head.kind == Kind::Symbol)
      if (const ValueP* v = env->find(head.s); v && (*v)->object<Closure>() && (*v)->object<Closure>()->is_macro)
        return nullptr;
    for (const auto& item : form.items)
      if (const Value* s = first_unbound(*item)) return s;
    return nullptr;
  }
};

}  // namespace

std::vector<std::string> stage_condition_names(const std::vector<std::string>& pass_metrics) {
  std::vector<std::string> names = pass_metrics;
  names.push_back("step");
  names.push_back("train/loss");
  return names;
}

void check_stage_conditions(Interp& in, const Experiment& x,
                            const std::function<std::vector<std::string>(const std::string&)>& pass_metrics) {
  for (const auto& st : x.curriculum) {
    if (!st.when) continue;
    std::vector<std::string> bound = stage_condition_names(pass_metrics(st.pass));
    UnboundFinder finder{in, st.env, bound, {}};
    finder.collect_binders(*st.when);
    const Value* name = finder.first_unbound(*st.when);
    if (!name) continue;
    std::string help = did_you_mean(name->s, bound);
    if (help.empty()) help = did_you_mean(name->s, st.env->names());
    throw in.error_here(Code::DEF_011, name->span,
                        fmt::format("stage \"{}\" :when reads `{}`, which is not bound after pass `{}`; it may read {}",
                                    st.name, name->s, st.pass, join_capped(bound, ", ")),
                        help);
  }
}

}  // namespace sx
