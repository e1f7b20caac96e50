#include "cli/watch_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "util/printable.h"

namespace sx::watch {

namespace {

using Json = nlohmann::json;

double number(const Json& j, const char* key, double fallback = 0) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}
std::string text(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

void evals_of(const Json& obj, std::map<std::string, double>& out, const std::string& prefix = "") {
  if (!obj.is_object()) return;
  for (const auto& [k, v] : obj.items())
    if (v.is_number()) out[prefix + k] = v.get<double>();
}

std::string duration(double s) {
  if (!std::isfinite(s) || s < 0) return "-";
  auto t = static_cast<int64_t>(std::llround(s));
  if (t >= 3600) return fmt::format("{}:{:02d}:{:02d}", t / 3600, t / 60 % 60, t % 60);
  return fmt::format("{}:{:02d}", t / 60, t % 60);
}

}  // namespace

View from_status(const Json& s, std::vector<double> history) {
  View v;
  v.slug = text(s, "slug");
  v.state = text(s, "state");
  v.device = text(s, "device");
  v.step = static_cast<int64_t>(number(s, "step"));
  v.steps = static_cast<int64_t>(number(s, "steps"));
  if (s.contains("train_loss") && s["train_loss"].is_number()) v.train_loss = s["train_loss"].get<double>();
  if (s.contains("eval")) evals_of(s["eval"], v.evals);
  double sps = number(s, "steps_per_s", -1);
  const Json& counters = s.contains("counters") ? s["counters"] : Json::object();
  if (sps > 0 && v.step > 0) v.tokens_per_s = sps * number(counters, "tokens") / static_cast<double>(v.step);
  if (s.contains("eta_s") && s["eta_s"].is_number()) v.eta_s = s["eta_s"].get<double>();
  v.updated_at = text(s, "updated_at");
  if (s.contains("error") && s["error"].is_object())
    v.error = text(s["error"], "code") + ": " + text(s["error"], "message");
  v.losses = std::move(history);
  return v;
}

View from_jsonl(const std::string& content) {
  View v;
  std::map<int64_t, Json> steps;
  std::map<std::string, std::pair<int64_t, double>> evals;  // the latest pass's value
  std::istringstream in(content);
  for (std::string line; std::getline(in, line);) {
    Json r = Json::parse(line, nullptr, false);
    if (!r.is_object()) continue;  // a line being written, or not a record
    std::string kind = text(r, "kind");
    if (kind == "meta") {
      v.slug = text(r, "slug");
      v.device = text(r, "device");
      v.state = "running";
      if (r.contains("knobs") && r["knobs"].is_array())
        for (const auto& k : r["knobs"])
          if (text(k, "name") == "steps" && k["value"].is_number()) v.steps = k["value"].get<int64_t>();
      v.error.clear();
    } else if (kind == "step") {
      int64_t step = static_cast<int64_t>(number(r, "step"));
      // A resumed segment re-runs steps: the later record replaces the earlier, and steps after it are gone.
      steps.erase(steps.lower_bound(step), steps.end());
      steps[step] = r;
    } else if (kind == "eval") {
      std::string prefix = text(r, "pass") == "eval" ? "" : text(r, "pass") + ":";
      int64_t step = static_cast<int64_t>(number(r, "step"));
      for (const auto& [k, val] : r.items())
        if (val.is_number() && k != "step") evals[prefix + k] = {step, val.get<double>()};
    } else if (kind == "event") {
      v.updated_at = text(r, "at");
      if (text(r, "event") == "error") v.error = text(r, "code") + ": " + text(r, "message");
    } else if (kind == "summary") {
      v.state = r.contains("state") && r["state"].is_string() ? r["state"].get<std::string>() : "done";
    }
  }
  for (const auto& [step, r] : steps) v.losses.push_back(number(r, "train/loss"));
  if (!steps.empty()) {
    const Json& last = steps.rbegin()->second;
    v.step = steps.rbegin()->first;
    v.train_loss = number(last, "train/loss");
    std::vector<double> recent;
    for (auto it = steps.rbegin(); it != steps.rend() && recent.size() < 10; ++it)
      if (double s = number(it->second, "step_s", -1); s > 0) recent.push_back(s);
    if (!recent.empty()) {
      std::nth_element(recent.begin(), recent.begin() + recent.size() / 2, recent.end());
      double step_s = recent[recent.size() / 2];
      int64_t prev = steps.size() > 1 ? static_cast<int64_t>(number(std::next(steps.rbegin())->second, "tokens")) : 0;
      v.tokens_per_s = (number(last, "tokens") - static_cast<double>(prev)) / step_s;
      if (v.steps > 0) v.eta_s = static_cast<double>(std::max<int64_t>(0, v.steps - v.step)) * step_s;
    }
  }
  for (const auto& [name, sv] : evals) v.evals[name] = sv.second;
  return v;
}

std::string sparkline(const std::vector<double>& values, size_t width) {
  static const char* kBars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  std::vector<double> shown;
  for (size_t i = values.size() > width ? values.size() - width : 0; i < values.size(); ++i)
    if (std::isfinite(values[i])) shown.push_back(values[i]);
  if (shown.empty()) return "";
  auto [lo, hi] = std::minmax_element(shown.begin(), shown.end());
  std::string out;
  for (double x : shown) {
    int level = *hi > *lo ? static_cast<int>(std::lround((x - *lo) / (*hi - *lo) * 7)) : 3;
    out += kBars[std::clamp(level, 0, 7)];
  }
  return out;
}

std::vector<std::string> render(const View& v, size_t width) {
  std::vector<std::string> lines;
  std::string progress = v.steps > 0 ? fmt::format("step {}/{} ({}%)", v.step, v.steps, v.step * 100 / v.steps)
                                     : fmt::format("step {}", v.step);
  lines.push_back(fmt::format("{}  {}  {}{}", printable(v.slug.empty() ? "-" : v.slug),
                              printable(v.state.empty() ? "-" : v.state), progress,
                              v.device.empty() ? "" : "  " + printable(v.device)));
  std::string numbers = v.train_loss ? fmt::format("train/loss {:.5f}", *v.train_loss) : "train/loss -";
  for (const auto& [name, x] : v.evals) numbers += fmt::format("  {} {:.5f}", printable(name), x);
  lines.push_back(numbers);
  size_t cells = width > 16 ? std::min<size_t>(width - 16, 60) : 8;
  std::string spark = sparkline(v.losses, cells);
  lines.push_back(spark.empty() ? "loss -"
                                : fmt::format("loss {} (last {} steps)", spark, std::min(v.losses.size(), cells)));
  lines.push_back(fmt::format(
      "{} tokens/s  ETA {}  updated {}", v.tokens_per_s ? fmt::format("{:.0f}", *v.tokens_per_s) : "-",
      v.eta_s && !v.ended() ? duration(*v.eta_s) : "-", v.updated_at.empty() ? "-" : printable(v.updated_at)));
  if (!v.error.empty()) lines.push_back("error " + printable(v.error));
  return lines;
}

}  // namespace sx::watch
