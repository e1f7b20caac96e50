#include "cli/report_model.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cli/sweep.h"
#include "util/error.h"
#include "util/fd_io.h"

namespace sx::report {

namespace {

namespace fs = std::filesystem;
using records::Json;
using records::number;
using records::text;

// Fields of a step record that are counters or times, not curves of their own.
bool bookkeeping(const std::string& key) {
  static const std::set<std::string> keys = {"kind", "step", "lr", "records", "tokens", "stage", "elapsed_s", "step_s"};
  return keys.count(key) > 0;
}

std::string unreadable(const std::string& path, const std::string& why) {
  return fmt::format("cannot read {}: {}", path, why);
}

Run read_jsonl(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw UserError(Code::CLI_061, {}, unreadable(path, std::strerror(errno)));
  // A FIFO or a device would be waited on, or read forever.
  if (!S_ISREG(st.st_mode))
    throw UserError(
        Code::CLI_061, {},
        unreadable(path, fmt::format("expected a jsonl file or a sweep folder, found {}", file_kind(st.st_mode))),
        "give the file of --metrics jsonl:<path>, or the folder of sexpgpu sweep --dir");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(Code::CLI_061, {}, unreadable(path, std::strerror(errno)));
  Run run;
  run.source = path;
  run.history = records::read_history(in);
  if (in.bad()) throw UserError(Code::CLI_061, {}, unreadable(path, std::strerror(errno)));
  if (!run.history.segments.empty()) run.label = text(run.history.segments.back().meta, "slug");
  if (run.label.empty()) run.label = fs::path(path).stem().string();
  run.state = run.history.ended.empty() ? "unfinished" : run.history.ended;
  if (run.state == "failed")
    for (const auto& [key, e] : run.history.events)
      if (key.first == "error") run.error = text(e, "code");
  return run;
}

// A sweep folder: its runs in the manifest's order, each state as the sweep's table says it.
std::vector<Run> read_sweep(const std::string& dir, std::string& file) {
  const std::string manifest_path = dir + "/sweep.json";
  std::ifstream in(manifest_path);
  if (!in)
    throw UserError(Code::CLI_061, {},
                    unreadable(manifest_path,
                               errno == ENOENT ? "the folder is not a sweep's (no sweep.json)" : std::strerror(errno)),
                    "give a folder that sexpgpu sweep wrote, or the runs' jsonl files");
  Json manifest = Json::parse(in, nullptr, false);
  if (manifest.is_discarded() || !manifest.is_object() || text(manifest, "kind") != "sweep" ||
      !manifest["runs"].is_array())
    throw UserError(Code::CLI_061, {}, unreadable(manifest_path, "expected a sweep manifest, found something else"),
                    "give a folder that sexpgpu sweep wrote");
  file = text(manifest, "file");
  std::vector<Run> runs;
  for (const auto& m : manifest["runs"]) {
    sweep::Run sr;
    sr.slug = text(m, "slug");
    if (sr.slug.empty()) continue;
    std::string jsonl = dir + "/" + sr.slug + ".jsonl";
    std::error_code ec;
    Run run;
    if (fs::exists(jsonl, ec))
      run = read_jsonl(jsonl);
    else
      run.source = jsonl;
    run.label = sr.slug;
    sweep::Summary s = sweep::summarize(dir, sr);
    run.state = s.state;
    run.error = s.error;
    runs.push_back(std::move(run));
  }
  return runs;
}

// Two files of one slug get their file names, so the legend tells them apart.
void unique_labels(std::vector<Run>& runs) {
  for (size_t a = 0; a < runs.size(); ++a) {
    bool shared = false;
    for (size_t b = 0; b < runs.size(); ++b) shared |= a != b && runs[a].label == runs[b].label;
    if (shared) runs[a].label += " (" + runs[a].source + ")";
  }
}

std::string pass_metric(const std::string& pass, const std::string& metric) {
  return pass == "eval" ? metric : pass + ":" + metric;
}

void add_point(std::vector<Point>& points, int64_t step, std::optional<double> v) {
  if (v && std::isfinite(*v)) points.push_back({step, *v});
}

Chart step_chart(const Report& r, const std::string& name, const std::string& group = "") {
  Chart c{name, group, false, {}};
  for (size_t k = 0; k < r.runs.size(); ++k) {
    Series s{k, {}};
    for (const auto& [step, rec] : r.runs[k].history.steps) add_point(s.points, step, number(rec, name));
    if (!s.points.empty()) c.series.push_back(std::move(s));
  }
  return c;
}

// Tokens a second of each step: its tokens over its own seconds.
Chart tokens_chart(const Report& r) {
  Chart c{"tokens/s", "", false, {}};
  for (size_t k = 0; k < r.runs.size(); ++k) {
    Series s{k, {}};
    const auto& steps = r.runs[k].history.steps;
    for (auto it = steps.begin(); it != steps.end(); ++it) {
      auto tokens = number(it->second, "tokens"), secs = number(it->second, "step_s");
      std::optional<double> before = it->first == 1 ? std::optional<double>(0) : std::nullopt;
      if (it != steps.begin() && std::prev(it)->first == it->first - 1)
        before = number(std::prev(it)->second, "tokens");
      if (tokens && secs && before && *secs > 0) add_point(s.points, it->first, (*tokens - *before) / *secs);
    }
    if (!s.points.empty()) c.series.push_back(std::move(s));
  }
  return c;
}

}  // namespace

Report read_report(const std::vector<std::string>& paths) {
  if (paths.empty())
    throw UserError(Code::CLI_002, {}, "report: expected jsonl metrics files or a sweep folder, found none",
                    "sexpgpu report my-run.jsonl");
  Report r;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<Run> runs = read_sweep(p, r.sweep_file);
      r.title = fmt::format("sweep {}", r.sweep_file.empty() ? p : r.sweep_file);
      for (auto& run : runs) r.runs.push_back(std::move(run));
    } else {
      r.runs.push_back(read_jsonl(p));
      if (r.runs.back().history.empty())
        throw UserError(Code::CLI_062, {}, fmt::format("nothing to report: {} holds no metrics records", p),
                        "give the file of --metrics jsonl:<path> of a run that has started");
    }
  }
  bool any = false;
  for (const auto& run : r.runs) any |= !run.history.empty();
  if (!any)
    throw UserError(Code::CLI_062, {},
                    fmt::format("nothing to report: no run of {} has a metrics record yet", fmt::join(paths, ", ")),
                    "run the sweep first (sexpgpu sweep FILE --dir D), then report on D");
  unique_labels(r.runs);
  if (paths.size() > 1 || r.title.empty())
    r.title = r.runs.size() == 1 ? r.runs[0].label : fmt::format("{} runs", r.runs.size());
  return r;
}

Report report_of(const std::string& title, const std::vector<std::pair<std::string, std::string>>& runs) {
  Report r;
  r.title = title;
  for (const auto& [label, jsonl] : runs) {
    std::istringstream in(jsonl);
    Run run;
    run.label = label;
    run.source = label + ".jsonl";
    run.history = records::read_history(in);
    run.state = run.history.ended.empty() ? "unfinished" : run.history.ended;
    r.runs.push_back(std::move(run));
  }
  return r;
}

std::vector<Chart> charts(const Report& r) {
  std::vector<Chart> out;
  out.push_back(step_chart(r, "train/loss"));
  out.back().final = true;
  // Each pass's metrics, `eval` first, loss first: as the console and the summary name them.
  std::map<std::string, std::set<std::string>> pass_metrics;
  for (const auto& run : r.runs)
    for (const auto& [pass, by_step] : run.history.evals)
      for (const auto& [step, rec] : by_step)
        for (const auto& [k, v] : rec.items())
          if (v.is_number_float() && k != "elapsed_s") pass_metrics[pass].insert(k);
  std::vector<std::string> passes;
  if (pass_metrics.count("eval")) passes.push_back("eval");
  for (const auto& [pass, m] : pass_metrics)
    if (pass != "eval") passes.push_back(pass);
  for (const auto& pass : passes) {
    std::vector<std::string> metrics(pass_metrics[pass].begin(), pass_metrics[pass].end());
    std::stable_partition(metrics.begin(), metrics.end(), [](const std::string& m) { return m == "eval/loss"; });
    for (const auto& metric : metrics) {
      Chart c{pass_metric(pass, metric), "", true, {}};
      for (size_t k = 0; k < r.runs.size(); ++k) {
        auto it = r.runs[k].history.evals.find(pass);
        if (it == r.runs[k].history.evals.end()) continue;
        Series s{k, {}};
        for (const auto& [step, rec] : it->second) add_point(s.points, step, number(rec, metric));
        if (!s.points.empty()) c.series.push_back(std::move(s));
      }
      out.push_back(std::move(c));
    }
  }
  // The model's other outputs (train/accuracy), then the diagnostics by name (grad/norm/<path>).
  std::set<std::string> outputs, diagnostics;
  for (const auto& run : r.runs)
    for (const auto& [step, rec] : run.history.steps)
      for (const auto& [k, v] : rec.items())
        if (v.is_number() && !bookkeeping(k) && k != "train/loss")
          (k.rfind("train/", 0) == 0 ? outputs : diagnostics).insert(k);
  for (const auto& k : outputs) out.push_back(step_chart(r, k));
  out.push_back(step_chart(r, "lr"));
  out.push_back(tokens_chart(r));
  for (const auto& k : diagnostics) {
    auto slash = k.rfind('/');
    out.push_back(step_chart(r, k, slash == std::string::npos ? k : k.substr(0, slash)));
  }
  out.erase(std::remove_if(out.begin(), out.end(), [](const Chart& c) { return c.series.empty(); }), out.end());
  return out;
}

std::vector<Mark> marks(const Report& r) {
  std::vector<Mark> out;
  for (size_t k = 0; k < r.runs.size(); ++k) {
    const records::History& h = r.runs[k].history;
    for (const auto& seg : h.segments)
      if (seg.resumed_from)
        out.push_back({Mark::resume, *seg.resumed_from, k, fmt::format("resumed from step {}", *seg.resumed_from)});
    for (const auto& [key, e] : h.events) {
      const auto& [event, step] = key;
      if (event == "stage")
        out.push_back({Mark::stage, step, k,
                       fmt::format("stage {} {} at step {} ({})", number(e, "to").value_or(0), text(e, "name"), step,
                                   text(e, "condition"))});
      else if (event == "checkpoint")
        out.push_back({Mark::checkpoint, step, k, fmt::format("checkpoint {}", text(e, "path"))});
      else if (event == "signal")
        out.push_back({Mark::stop, step, k, fmt::format("stopped by {} at step {}", text(e, "name"), step)});
      else if (event == "error")
        out.push_back({Mark::error, step, k, fmt::format("failed at step {}: {}", step, text(e, "code"))});
    }
  }
  return out;
}

int64_t last_step(const Run& run) { return run.history.steps.empty() ? 0 : run.history.steps.rbegin()->first; }

double time_s(const Run& run) {
  double t = 0;
  for (const auto& seg : run.history.segments) t += seg.elapsed_s;
  return t;
}

Final finals(const Report& r) {
  Final f;
  std::vector<Chart> all = charts(r);
  for (const auto& c : all)
    if (c.final) f.metrics.push_back(c.name);
  f.values.assign(r.runs.size(), std::vector<std::optional<double>>(f.metrics.size()));
  for (size_t m = 0; m < f.metrics.size(); ++m)
    for (const auto& c : all)
      if (c.final && c.name == f.metrics[m])
        for (const auto& s : c.series) f.values[s.run][m] = s.points.back().value;
  return f;
}

}  // namespace sx::report
