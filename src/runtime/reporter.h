#pragma once
// The run's reports (outputs.md): everything the loop tells the user goes
// through the Reporter, which writes it to its sinks in the order outputs.md
// gives: the console (standard error: the run line, the pass and stage lines,
// checkpoint lines, the timing block, the end block), the metrics records
// (records.h, to one MetricsTarget), and the status file (status_file.h). It
// reads the run's state; it changes none of it.
#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "runtime/records.h"
#include "runtime/resume.h"
#include "runtime/run_state.h"
#include "runtime/status_file.h"
#include "runtime/timing.h"
#include "util/error.h"

namespace sx {

struct Experiment;
struct RunRequest;

class Reporter {
 public:
  // Opens the metrics target and the status file (E-METRICS-001, E-ENV-010);
  // a rank that does not lead the run opens neither.
  Reporter(const RunRequest& req, const RunState& state, std::string device, bool leads);

  // Known once the file is compiled: the slug, the steps, the knobs.
  void attach(const Experiment& x);
  // Several nodes: the run line ends `node <rank>/<nodes>`; only node 0 prints the lines after it.
  void set_node(int rank, int nodes) { node_ = fmt::format(" node {}/{}", rank, nodes); }

  // The status file in `state` ("compiling", "running", ...); `throttle`: at most once a second.
  void status(const char* state, bool throttle = false);
  // Refused before the first step (exit 2): the status file says failed; the caller prints the error.
  void refused(const UserError& e);

  // `run:` (and `metrics:`) on standard error.
  void run_line(const std::vector<std::string>& evals, const std::string& checkpoints, const std::string& resume);
  // `resume:` and one line per difference.
  void resume_lines(const std::string& path, const std::vector<ResumeDifference>& differences);
  // The meta record, the start event, and the resume event when resuming.
  void started(const std::string& graph_hash, int64_t params, const std::optional<CheckpointRef>& resumed_from,
               const std::vector<ResumeDifference>& differences);

  // A metrics record as it is (a step record, one a stopped run could not write).
  void record(const Json& rec) { metrics_.write(rec); }
  void event(const std::string& name, int64_t step, Json fields);
  // What the metrics target could not write; a checkpoint keeps it.
  const Json& unwritten() const { return metrics_.unwritten(); }
  // What a hosted metrics target has not had acknowledged; a checkpoint keeps it.
  Json unacknowledged() const { return metrics_.unacknowledged(); }
  // What a resumed checkpoint kept of an earlier session's: delivered first.
  void carry(const Json& unacknowledged) { metrics_.carry(unacknowledged); }

  // A pass's eval record, then (after the state has its values) its line.
  void eval_record(const std::string& pass, int64_t step, const std::vector<std::pair<std::string, double>>& metrics);
  void eval_line(const std::string& pass, int64_t step, const std::vector<std::pair<std::string, double>>& metrics);
  // The `stage` line of the stage just entered.
  void stage_line(int64_t stage, const std::string& name, int64_t step, const std::string& why);
  void checkpoint_failed(int64_t step, const UserError& e);
  void checkpoint_written(int64_t step, const ckpt::WriteResult& w);

  // The ends of a run (outputs.md, "The end of a run").
  void done(const Timings& timings);
  void stopping(int sig, double seconds_to_exit);
  void stopped(const Timings& timings);
  void failed(const UserError& e, int64_t at, const Timings& timings);
  void stopped_before_start(int sig, double seconds_to_exit);
  // An error on the way out that does not change how the run ends.
  static void error_line(const UserError& e);

 private:
  Json summary(const char* state, const UserError* error) const;
  void write_summary(const Json& s, bool may_fail);
  void finish(const char* state, const char* word, const UserError* error, const Timings& timings);
  void end_block(const char* word) const;
  void record_last(const Json& rec);
  void write_status(const char* state, bool throttle, const Json* summary_obj, const UserError* error);
  int64_t steps() const;

  const RunRequest& req_;
  const RunState& state_;
  const std::string device_;
  const bool leads_;
  std::string node_;  // " node 1/2", or nothing on one node
  MetricsSink metrics_;
  StatusFile status_;
  const Experiment* x_ = nullptr;
  int64_t pid_;
  std::string started_at_;
  std::string segment_;  // this session's id (metrics-service.md): started_at, pid, 8 random hex digits
  Stopwatch status_clock_;
  double last_status_s_ = -1e9;
};

}  // namespace sx
