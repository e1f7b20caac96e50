// A curriculum stage's :when is evaluated by the run, after a pass, with the
// pass's metrics bound. A name it reads that will not be bound then would
// fail the run after its first pass; check_stage_conditions finds it first.
#include "lang/stage_conditions.h"

#include <algorithm>

namespace sx {

namespace {

// The symbol of `form` written at `at`, or nullptr.
const Value* symbol_at(const Value& form, Span at) {
  if (form.kind == Kind::Symbol && form.span.file == at.file && form.span.begin == at.begin &&
      form.span.end == at.end)
    return &form;
  if (form.kind != Kind::List) return nullptr;
  for (const auto& item : form.items)
    if (const Value* s = symbol_at(*item, at)) return s;
  return nullptr;
}

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
    // A trial evaluation with stand-in values: only a name that is not bound
    // is an error here; what the real values make of the condition is the run's.
    auto env = std::make_shared<Env>(st.env);
    for (const auto& name : bound) env->vars[name] = name == "step" ? integer(1) : floating(1.0);
    try {
      in.eval(st.when, env);
    } catch (const UserError& e) {
      if (e.code() != Code::EVAL_001) continue;
      const Value* name = symbol_at(*st.when, e.diagnostics().front().span);
      if (!name) continue;
      std::string help = did_you_mean(name->s, bound);
      if (help.empty()) help = did_you_mean(name->s, env->names());
      throw in.error_here(Code::DEF_011, name->span,
                          fmt::format("stage \"{}\" :when reads `{}`, which is not bound after pass `{}`; it may "
                                      "read {}",
                                      st.name, name->s, st.pass, fmt::join(bound, ", ")),
                          help);
    }
  }
}

}  // namespace sx
