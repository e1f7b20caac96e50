#include "runtime/curriculum.h"

#include <limits>
#include <memory>

#include "lang/experiment.h"
#include "lang/interp.h"

namespace sx {

namespace {

// "(eval/loss 2.43120 < 2.5)": a comparison with the metrics it read.
std::string describe_condition(const Value& when, const Env& env) {
  if (when.kind != Kind::List || when.items.size() != 3 || when.items[0]->kind != Kind::Symbol) return repr(when);
  auto side = [&](const Value& v) {
    if (v.kind == Kind::Symbol)
      if (const ValueP* b = env.find(v.s); b && (*b)->is_number())
        return (*b)->kind == Kind::Float ? fmt::format("{} {:.5f}", v.s, (*b)->f) : fmt::format("{} {}", v.s, (*b)->i);
    return repr(v);
  };
  return fmt::format("{} {} {}", side(*when.items[1]), when.items[0]->s, side(*when.items[2]));
}

}  // namespace

std::optional<std::string> stage_condition_met(Interp& interp, const StageDecl& next, const std::string& pass,
                                               int64_t step, const RunState& state) {
  auto env = std::make_shared<Env>(next.env);
  std::string prefix = pass == "eval" ? "" : pass + ":";
  for (const auto& [key, v] : state.last_eval)
    if (key.rfind(prefix, 0) == 0 && (pass != "eval" || key.find(':') == std::string::npos))
      env->vars[key.substr(prefix.size())] = floating(v);
  env->vars["step"] = integer(step);
  // Before the first step there is no training loss: NaN, so every comparison with it is false.
  env->vars["train/loss"] = floating(step > 0 ? state.train_loss : std::numeric_limits<double>::quiet_NaN());
  ValueP ok = interp.eval(next.when, env);
  if (!ok->truthy()) return std::nullopt;
  return describe_condition(*next.when, *env);
}

}  // namespace sx
