#pragma once
// sexpgpu sweep: one `sexpgpu run` process per selection of a grid, in a sweep
// folder that holds each run's metrics, status, log and the sweep manifest.
#include <optional>
#include <string>
#include <vector>

namespace sx::sweep {

// One selection of the grid and what became of it.
struct Run {
  std::string slug;
  std::string variant;                                    // "" for none
  std::vector<std::pair<std::string, std::string>> sets;  // knob=value, in axis order
  std::string prior_state;  // the status file's state before this sweep started it; "" when none
  bool launched = false;
  int exit_status = -1;  // of its process; -1 when it did not run in this sweep
  std::string busy;      // another process holds its lock: who, from the lock file
};

// What the table shows of one run, read from D/<slug>.jsonl (latest-segment
// rule) and D/<slug>.status.json.
struct Summary {
  std::string slug, state;  // done, stopped, failed, running, busy, not run
  std::optional<double> train_loss;
  std::vector<std::pair<std::string, double>> eval;  // the last value of each pass metric
  int64_t steps = 0;
  double time_s = 0;  // summed over the file's segments
  std::string error;  // the code of a failed run
};

Summary summarize(const std::string& dir, const Run& run);
// The table, one row per run, the eval columns the union of every run's.
std::string table(const std::vector<Summary>& rows);
// One JSON object per line.
std::string json_lines(const std::vector<Summary>& rows);

}  // namespace sx::sweep
