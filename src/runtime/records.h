#pragma once
// The run's metrics records: JSON lines, written whole (one write(2) each) to
// the metrics target; the first that cannot be written stops the run.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "runtime/metrics_targets.h"
#include "util/environment.h"
#include "util/error.h"

namespace sx {

using Json = nlohmann::ordered_json;

// One line of JSON. Bytes that are not UTF-8 (a tensor name read from a file,
// quoted in an error) are written as U+FFFD rather than refused.
std::string json_text(const Json& record);

// "2026-11-29T10:00:00.000Z": RFC 3339 UTC with milliseconds.
std::string rfc3339_now();

// A metrics record that could not be written (E-METRICS-010, E-METRICS-011).
// Its own type so the session can write a checkpoint before it fails.
struct MetricsWriteError : UserError {
  using UserError::UserError;
};

// The run's metrics records, written to its target (metrics_targets.h).
class MetricsSink {
 public:
  // Opens the target: E-METRICS errors before the first step. None: writes nothing.
  explicit MetricsSink(const std::optional<MetricsTargetConfig>& target);
  ~MetricsSink();
  bool enabled() const { return target_ != nullptr; }
  // One write(2) of the whole line. The first record that cannot be written
  // throws MetricsWriteError, after removing any part of it that reached the
  // file; from then on the sink writes nothing, so the records that end a run
  // failing for this reason are dropped rather than thrown again.
  void write(const Json& record);
  bool failed() const { return failed_; }
  // The record that could not be written (null until one fails): a checkpoint
  // of the failing step carries it, and the resumed run writes it first.
  const Json& unwritten() const { return unwritten_; }
  // The target as the summary names it: the absolute path of a jsonl file, "stdout", or null.
  Json describe() const;
  // "jsonl:/abs/path" or "stdout", for the `metrics:` line.
  std::string line() const;
  // The hosted target's part (metrics_targets.h): the slug and segment once
  // known, what a checkpoint carries, what a resumed checkpoint carried.
  void attach(const std::string& slug, const std::string& segment) {
    if (target_) target_->attach(slug, segment);
  }
  Json unacknowledged() const { return target_ ? target_->unacknowledged() : Json::array(); }
  void carry(const Json& carried) {
    if (target_) target_->carry(carried);
  }

 private:
  std::unique_ptr<report::MetricsTarget> target_;
  bool failed_ = false;
  Json unwritten_;
};

}  // namespace sx
