// The sweep's final table, from each run's jsonl file (the latest segment's
// record of each step wins, as docs/metrics.md reads a file) and status file.
#include <fmt/format.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/sweep.h"

namespace sx::sweep {

namespace {

using json = nlohmann::ordered_json;

std::optional<json> read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

void read_metrics(const std::string& path, Summary& s) {
  std::ifstream in(path);
  std::map<int64_t, double> losses;
  std::map<std::string, std::map<int64_t, double>> evals;  // named as the summary names them -> step -> value
  double segment_elapsed = 0;
  std::string line;
  while (std::getline(in, line)) {
    json r = json::parse(line, nullptr, false);  // a line cut by a hard kill is not a record
    if (r.is_discarded() || !r.is_object() || !r.contains("kind")) continue;
    const std::string kind = r["kind"].is_string() ? r["kind"].get<std::string>() : "";
    if (kind == "meta") {
      s.time_s += segment_elapsed;
      segment_elapsed = 0;
      continue;
    }
    if (r.contains("elapsed_s") && r["elapsed_s"].is_number())
      segment_elapsed = std::max(segment_elapsed, r["elapsed_s"].get<double>());
    if (!r.contains("step") || !r["step"].is_number_integer()) continue;
    int64_t step = r["step"].get<int64_t>();
    if (kind == "step" && r.contains("train/loss") && r["train/loss"].is_number()) {
      losses[step] = r["train/loss"].get<double>();
    } else if (kind == "eval" && r.contains("pass") && r["pass"].is_string()) {
      const std::string pass = r["pass"].get<std::string>();
      for (const auto& [k, v] : r.items())
        if (v.is_number_float() && k != "elapsed_s") evals[pass == "eval" ? k : pass + ":" + k][step] = v.get<double>();
    }
  }
  s.time_s += segment_elapsed;
  if (!losses.empty()) {
    s.steps = losses.rbegin()->first;
    s.train_loss = losses.rbegin()->second;
  }
  for (const auto& [metric, by_step] : evals) s.eval.emplace_back(metric, by_step.rbegin()->second);
}

std::string number(const std::optional<double>& v) { return v ? fmt::format("{:.4f}", *v) : "-"; }

}  // namespace

Summary summarize(const std::string& dir, const Run& run) {
  Summary s;
  s.slug = run.slug;
  read_metrics(dir + "/" + run.slug + ".jsonl", s);
  auto status = read_json(dir + "/" + run.slug + ".status.json");
  s.state = status && (*status)["state"].is_string() ? (*status)["state"].get<std::string>() : "not run";
  if (status && status->contains("error") && (*status)["error"].is_object() && (*status)["error"]["code"].is_string())
    s.error = (*status)["error"]["code"].get<std::string>();
  if (!run.busy.empty()) s.state = "busy";
  // A process that ended without saying so in its status file (killed hard, or
  // refused before it could write one) is failed, whatever the file last said.
  if (run.launched && run.exit_status != 0 &&
      (s.state == "done" || s.state == "running" || s.state == "compiling" || s.state == "evaluating" ||
       s.state == "checkpointing" || s.state == "not run"))
    s.state = "failed";
  if (s.state == "failed" && s.error.empty() && run.exit_status > 0) s.error = fmt::format("exit {}", run.exit_status);
  return s;
}

std::string table(const std::vector<Summary>& rows) {
  std::set<std::string> metric_set;
  for (const auto& r : rows)
    for (const auto& [m, v] : r.eval) metric_set.insert(m);
  std::vector<std::string> header = {"slug", "train/loss"};
  header.insert(header.end(), metric_set.begin(), metric_set.end());
  for (const char* h : {"steps", "time", "state"}) header.push_back(h);
  std::vector<std::vector<std::string>> cells = {header};
  for (const auto& r : rows) {
    std::vector<std::string> row = {r.slug, number(r.train_loss)};
    for (const auto& m : metric_set) {
      std::optional<double> v;
      for (const auto& [name, value] : r.eval)
        if (name == m) v = value;
      row.push_back(number(v));
    }
    row.push_back(fmt::format("{}", r.steps));
    row.push_back(fmt::format("{:.1f}s", r.time_s));
    row.push_back(r.error.empty() ? r.state : r.state + " " + r.error);
    cells.push_back(std::move(row));
  }
  std::vector<size_t> width(header.size(), 0);
  for (const auto& row : cells)
    for (size_t k = 0; k < row.size(); ++k) width[k] = std::max(width[k], row[k].size());
  std::string out;
  for (const auto& row : cells) {
    std::string line;
    for (size_t k = 0; k < row.size(); ++k)
      line += k + 1 == row.size() ? row[k] : fmt::format("{:<{}}  ", row[k], width[k]);
    out += line + "\n";
  }
  return out;
}

std::string json_lines(const std::vector<Summary>& rows) {
  std::string out;
  for (const auto& r : rows) {
    json eval = json::object();
    for (const auto& [m, v] : r.eval) eval[m] = v;
    json j = {{"kind", "sweep-run"}, {"slug", r.slug},
              {"state", r.state},    {"train_loss", r.train_loss ? json(*r.train_loss) : json()},
              {"eval", eval},        {"steps", r.steps},
              {"time_s", r.time_s},  {"error", r.error.empty() ? json() : json(r.error)}};
    out += j.dump() + "\n";
  }
  return out;
}

}  // namespace sx::sweep
