// sexpgpu knobs FILE [--json]: every knob (the run's settings first) with its
// type, default, doc and constraints, and every variant with what it sets.
#include <iostream>

#include "cli/cmd_bundle.h"
#include "cli/commands.h"
#include "util/stop_signals.h"
#include "lang/declarations.h"
#include "lang/frontend.h"
#include "lang/manifest_json.h"
#include "runtime/records.h"
#include "util/printable.h"

namespace sx {

namespace {

struct KnobRow {
  std::string name, type, dflt, doc, constraints;
  const KnobDecl* decl = nullptr;
};

std::string constraints_of(const KnobDecl& k) {
  std::vector<std::string> parts;
  if (!k.choices.empty()) {
    std::vector<std::string> cs;
    for (const auto& c : k.choices) cs.push_back(canonical(*c));
    parts.push_back(fmt::format("one of {}", fmt::join(cs, ", ")));
  }
  if (k.min) parts.push_back("min " + canonical(*k.min));
  if (k.max) parts.push_back("max " + canonical(*k.max));
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace

ExitStatus cmd_knobs(const ParsedArgs& args) {
  Environment env = command_environment(args);
  ExperimentArg arg = experiment_argument(args, "knobs");
  const std::string& file = arg.shown;
  Selection sel;  // the defaults: no variant, no --set
  sel.slug_base = env.run_slug;
  auto interp = load_experiment(arg.file, sel, env.eval_limit, StopSignals::flag(), arg.display);
  const Experiment& x = interp->experiment();

  // The run's settings are knobs without a defknob: their types and ranges are fixed.
  std::vector<KnobDecl> settings;
  for (const auto& s : run_settings()) settings.push_back(run_setting_decl(s.name, nullptr, {}));
  std::vector<KnobRow> rows;
  for (const auto& kv : x.manifest) {
    KnobRow r{kv.name, "", canonical(*kv.value), "", "", x.knob(kv.name)};
    bool setting = !r.decl;
    if (setting)
      for (const auto& k : settings)
        if (k.name == kv.name) r.decl = &k;
    r.type = r.decl->type();
    r.doc = setting ? "defrun setting" : r.decl->doc;
    r.constraints = constraints_of(*r.decl);
    rows.push_back(r);
  }

  if (args.has("--json")) {
    nlohmann::ordered_json out;
    out["file"] = file;
    out["knobs"] = nlohmann::ordered_json::array();
    for (size_t k = 0; k < rows.size(); ++k) {
      const auto& r = rows[k];
      nlohmann::ordered_json j = {{"name", r.name},
                                  {"type", r.type},
                                  {"default", to_json(*x.manifest[k].value)},
                                  {"doc", r.doc},
                                  {"setting", x.knob(r.name) == nullptr}};
      if (!r.decl->choices.empty()) {
        j["choices"] = nlohmann::ordered_json::array();
        for (const auto& c : r.decl->choices) j["choices"].push_back(to_json(*c));
      }
      if (r.decl->min) j["min"] = to_json(*r.decl->min);
      if (r.decl->max) j["max"] = to_json(*r.decl->max);
      out["knobs"].push_back(j);
    }
    out["variants"] = nlohmann::ordered_json::array();
    for (const auto& v : x.variants) {
      nlohmann::ordered_json sets = nlohmann::ordered_json::object();
      for (const auto& a : v.sets) sets[a.key] = to_json(*a.expr);
      out["variants"].push_back({{"name", v.name}, {"sets", sets}});
    }
    std::cout << json_text(out) << "\n";
    return ExitStatus::done;
  }

  size_t wn = 4, wt = 4, wd = 7;
  for (const auto& r : rows)
    wn = std::max(wn, r.name.size()), wt = std::max(wt, r.type.size()), wd = std::max(wd, r.dflt.size());
  std::cout << fmt::format("{:<{}}  {:<{}}  {:<{}}  {}\n", "knob", wn, "type", wt, "default", wd, "doc");
  for (const auto& r : rows) {
    std::string doc = r.doc;
    if (!r.constraints.empty()) doc += (doc.empty() ? "" : " ") + fmt::format("({})", r.constraints);
    std::cout << one_line(fmt::format("{:<{}}  {:<{}}  {:<{}}  {}\n", r.name, wn, r.type, wt, r.dflt, wd, doc));
  }
  std::cout << "\n";
  if (x.variants.empty())
    std::cout << "variants: none\n";
  else
    std::cout << "variants:\n";
  for (const auto& v : x.variants) {
    std::vector<std::string> sets;
    for (const auto& a : v.sets) sets.push_back(fmt::format("{}={}", a.key, canonical(*a.expr)));
    std::cout << one_line(fmt::format("  {}  {}\n", v.name, fmt::join(sets, " ")));
  }
  return ExitStatus::done;
}

}  // namespace sx
