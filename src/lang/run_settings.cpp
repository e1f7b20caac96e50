#include "lang/run_settings.h"

#include "util/error.h"

namespace sx {

const std::vector<RunSetting>& run_settings() {
  using R = ResumeClass;
  static const std::vector<RunSetting> table = {
      // name, type, default, min, choices, nullable, resume
      {"steps", "integer", nullptr, 1, {}, false, R::notable_with_step_schedule},
      {"batch", "integer", nullptr, 1, {}, false, R::refused},  // the data order
      {"microbatches", "integer", "1", 1, {}, false, R::notable},
      {"seed", "integer", "0", 0, {}, false, R::refused},  // the data order
      {"precision", "symbol", "f32", {}, {"f32", "bf16", "tf32"}, false, R::notable},
      {"checkpoint-every", "integer", nullptr, 1, {}, true, R::safe},
      {"eval-every", "integer", nullptr, 0, {}, true, R::safe},
      {"diagnostics", "string", nullptr, {}, {}, true, R::safe},
  };
  return table;
}

const RunSetting* run_setting(const std::string& name) {
  for (const auto& s : run_settings())
    if (name == s.name) return &s;
  return nullptr;
}

const std::vector<std::string>& run_setting_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& s : run_settings()) out.emplace_back(s.name);
    return out;
  }();
  return names;
}

ValueP run_setting_default(const RunSetting& s) {
  if (!s.dflt) return nil();
  if (std::string(s.type) == "integer") return integer(std::stoll(s.dflt));
  if (std::string(s.type) == "symbol") return symbol(s.dflt);
  return string(s.dflt, {});
}

KnobDecl run_setting_decl(const std::string& name, ValueP dflt, Span at) {
  const RunSetting* s = run_setting(name);
  SX_ASSERT(s, "no run setting " + name);
  KnobDecl k;
  k.name = name;
  k.dflt = std::move(dflt);
  k.span = at;
  k.nullable = s->nullable;
  k.forced_type = s->type;
  for (const char* c : s->choices) k.choices.push_back(symbol(c));
  if (s->min) k.min = integer(*s->min);
  return k;
}

}  // namespace sx
