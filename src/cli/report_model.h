#pragma once
// What `sexpgpu report` shows (docs/report.md): the runs read from jsonl files
// or a sweep folder, and the charts made of their records. Pure data, so the
// HTML and SVG writers are tested without files.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/run_records.h"

namespace sx::report {

struct Run {
  std::string label;   // the slug, made unique among the runs
  std::string source;  // the jsonl file it was read from
  records::History history;
  std::string state;  // done, stopped, failed, unfinished (no end recorded), or a sweep's `not run`, `busy`
  std::string error;  // a failed run's code
};

struct Report {
  std::string title;
  std::string sweep_file;  // a sweep folder's experiment file; "" for jsonl files
  std::vector<Run> runs;
};

// The runs of `paths`: jsonl metrics files, or sweep folders (their runs in the
// manifest's order). E-CLI-061 for a path that cannot be read, E-CLI-062 when
// no run has a record.
Report read_report(const std::vector<std::string>& paths);
// The same from texts, for tests: (label, jsonl text) per run.
Report report_of(const std::string& title, const std::vector<std::pair<std::string, std::string>>& runs);

struct Point {
  int64_t step;
  double value;
};
struct Series {
  size_t run;  // index into Report::runs
  std::vector<Point> points;
};
// Something that happened at a step, drawn on every chart's step axis.
struct Mark {
  enum Kind { stage, checkpoint, resume, stop, error } kind;
  int64_t step;
  size_t run;
  std::string label;  // "stage 1 b (eval/loss 3.38 < 3.4)", "checkpoint .../step-9"
};
struct Chart {
  std::string name;    // the record field: "train/loss", "probe:eval/loss", "lr", "tokens/s", "grad/norm/head.w"
  std::string group;   // "" for the main charts; a diagnostic's name ("grad/norm") for the diagnostics
  bool final = false;  // a column of the final-metrics table: train/loss and the passes' metrics
  std::vector<Series> series;
};

// train/loss, each pass's metrics, the model's other outputs, lr, tokens/s,
// then each diagnostic (grouped by its name); a chart with no point is left out.
std::vector<Chart> charts(const Report& r);
std::vector<Mark> marks(const Report& r);

// The last value of each chart's series for a run, as the final-metrics table shows it.
struct Final {
  std::vector<std::string> metrics;                        // train/loss, then the eval metrics
  std::vector<std::vector<std::optional<double>>> values;  // [run][metric]
};
Final finals(const Report& r);
int64_t last_step(const Run& run);
double time_s(const Run& run);  // the segments' elapsed seconds, summed

}  // namespace sx::report
