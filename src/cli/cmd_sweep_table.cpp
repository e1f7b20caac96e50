// The sweep's final table, from each run's jsonl file (run_records.h: the
// latest segment's record of each step wins, as docs/metrics.md reads a file)
// and status file.
#include <fmt/format.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/run_records.h"
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
  records::History h = records::read_history(in);
  for (const auto& seg : h.segments) s.time_s += seg.elapsed_s;
  for (auto it = h.steps.rbegin(); it != h.steps.rend(); ++it)
    if (auto loss = records::number(it->second, "train/loss")) {
      s.steps = it->first;
      s.train_loss = *loss;
      break;
    }
  std::map<std::string, double> last;  // named as the summary names them; the pass's latest step that has it
  for (const auto& [pass, by_step] : h.evals)
    for (const auto& [step, r] : by_step)
      for (const auto& [k, v] : r.items())
        if (v.is_number_float() && k != "elapsed_s") last[pass == "eval" ? k : pass + ":" + k] = v.get<double>();
  s.eval.assign(last.begin(), last.end());
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
