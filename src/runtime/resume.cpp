#include "runtime/resume.h"

#include <algorithm>

#include "lang/manifest_json.h"
#include "lang/run_settings.h"
#include "lang/selection.h"

namespace sx {

namespace {

int rank(const std::string& cls) { return cls == "refused" ? 0 : cls == "notable" ? 1 : 2; }

std::string text_of(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return format_float(v.get<double>());
  return v.dump();
}

bool schedule_uses_steps(const Experiment& x) {
  const auto& lr = x.run->optimizer->lr;
  return lr && (lr->kind == "warmup-cosine" || lr->kind == "linear-decay");
}

// Which class a change of one knob falls in.
std::string class_of(const std::string& knob, const Experiment& x, bool graph_changed) {
  if (const RunSetting* s = run_setting(knob)) {
    switch (s->resume) {
      case ResumeClass::refused:
        return "refused";
      case ResumeClass::notable:
        return "notable";
      case ResumeClass::safe:
        return "safe";
      case ResumeClass::notable_with_step_schedule:
        return schedule_uses_steps(x) ? "notable" : "safe";
    }
  }
  // A knob of the file: refused when the model's parameters changed with it,
  // notable otherwise (it may change what future steps compute).
  return graph_changed ? "refused" : "notable";
}

// Each optimizer value that differs, as "optimizer.<field>": another kind is
// refused (its state has other names), any other value notable. A value that
// a changed knob already explains (the same old and new text) is not repeated.
void optimizer_differences(const nlohmann::ordered_json& state, const Experiment& x,
                           std::vector<ResumeDifference>& out) {
  if (!state.contains("optimizer")) return;
  nlohmann::ordered_json before = state["optimizer"];
  if (before.is_string()) before = {{"kind", before}};  // checkpoints of 0.1.0 kept only the kind
  if (!before.is_object()) return;
  nlohmann::ordered_json now = optimizer_json(*x.run->optimizer);
  std::vector<ResumeDifference> knob_changes = out;
  for (const auto& [field, value] : now.items()) {
    nlohmann::ordered_json old = before.contains(field) ? before[field] : nlohmann::ordered_json();
    if (old == value || (field != "kind" && !before.contains(field) && before.size() == 1)) continue;
    std::string from = text_of(old), to = text_of(value);
    bool explained = std::any_of(knob_changes.begin(), knob_changes.end(),
                                 [&](const ResumeDifference& d) { return d.from == from && d.to == to; });
    if (!explained) out.push_back({field == "kind" ? "refused" : "notable", "optimizer." + field, from, to});
  }
}

}  // namespace

nlohmann::ordered_json optimizer_json(const OptimizerSpec& o) {
  nlohmann::ordered_json j = {{"kind", o.kind}};
  if (o.lr) {
    j["lr.schedule"] = o.lr->kind;
    if (o.lr->kind == "constant") j["lr.value"] = o.lr->value;
    if (o.lr->kind == "warmup-cosine")
      j["lr.peak"] = o.lr->peak, j["lr.min"] = o.lr->min, j["lr.warmup"] = o.lr->warmup;
    if (o.lr->kind == "linear-decay") j["lr.from"] = o.lr->from, j["lr.to"] = o.lr->to;
  }
  if (o.kind == "sgd") {
    j["momentum"] = o.momentum;
    j["nesterov"] = o.nesterov;
  } else {
    j["beta1"] = o.beta1, j["beta2"] = o.beta2, j["eps"] = o.eps;
  }
  j["weight-decay"] = o.weight_decay;
  j["clip"] = o.clip ? nlohmann::ordered_json(*o.clip) : nlohmann::ordered_json();
  j["no-decay"] = o.no_decay;
  return j;
}

std::vector<ResumeDifference> resume_differences(const nlohmann::ordered_json& state, const Experiment& x,
                                                 const std::map<std::string, std::string>& graph_hashes, int threads) {
  std::vector<ResumeDifference> out;
  std::string old_graph = state.value("graph", "");
  const std::string& graph_hash = graph_hashes.at(x.run->precision);
  std::map<std::string, nlohmann::ordered_json> old_knobs;
  if (state.contains("knobs") && state["knobs"].is_array())
    for (const auto& k : state["knobs"])
      if (k.is_object() && k.contains("name") && k["name"].is_string())
        old_knobs[k["name"]] = k.value("value", nlohmann::ordered_json());
  // The checkpoint's graph against this model at the checkpoint's precision.
  auto old_precision = old_knobs.find("precision");
  auto then = old_precision != old_knobs.end() && old_precision->second.is_string()
                  ? graph_hashes.find(old_precision->second.get<std::string>())
                  : graph_hashes.end();
  bool graph_changed = old_graph != (then != graph_hashes.end() ? then->second : graph_hash);
  bool named_cause = false;
  for (const auto& k : x.manifest) {
    nlohmann::ordered_json now = to_json(*k.value);
    auto it = old_knobs.find(k.name);
    nlohmann::ordered_json before = it == old_knobs.end() ? nlohmann::ordered_json() : it->second;
    if (before == now) continue;
    std::string cls = class_of(k.name, x, graph_changed);
    named_cause = named_cause || cls == "refused";
    out.push_back({cls, k.name, text_of(before), text_of(now)});
  }
  if (graph_changed && !named_cause)
    out.push_back({"refused", "graph", old_graph.empty() ? "-" : old_graph, graph_hash});
  optimizer_differences(state, x, out);
  int old_threads = state.value("threads", threads);
  if (old_threads != threads)
    out.push_back({"notable", "threads", std::to_string(old_threads), std::to_string(threads)});
  std::stable_sort(out.begin(), out.end(), [](const ResumeDifference& a, const ResumeDifference& b) {
    return rank(a.cls) != rank(b.cls) ? rank(a.cls) < rank(b.cls) : a.what < b.what;
  });
  return out;
}

}  // namespace sx
