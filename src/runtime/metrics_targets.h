#pragma once
// Where metrics lines go (outputs.md, "Metrics"): each target is one class
// behind MetricsTarget, so a hosted target (syvain) is one more class. A
// target appends whole lines and says why one could not be appended; what a
// failed record means for the run is the MetricsSink's business (records.h).
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "util/environment.h"

namespace sx {
using MetricsTargetConfig = MetricsTarget;  // the --metrics setting (util/environment.h)
}

namespace sx::report {

// Why a line could not be appended.
struct AppendFailure {
  int err = 0;           // errno of the failed call
  bool removed = false;  // the file (or its folder) was removed while the run wrote it
};

class MetricsTarget {
 public:
  virtual ~MetricsTarget() = default;
  // Appends `line` (ending in '\n') with one write(2), or nothing of it.
  virtual std::optional<AppendFailure> append(std::string line) = 0;
  // How an error names the target: "standard output" or the absolute path.
  virtual std::string where() const = 0;
  // How the summary names it: "stdout" or the absolute path.
  virtual std::string describe() const = 0;
  // How the `metrics:` line names it: "stdout" or "jsonl:/abs/path".
  virtual std::string line() const = 0;

  // Known once the file is compiled: the run's slug and this session's
  // segment id (the meta record's `segment`). A hosted target sends nothing before.
  virtual void attach(const std::string& /*slug*/, const std::string& /*segment*/) {}
  // The records a hosted target has not had acknowledged yet, which a
  // checkpoint carries: [{"segment": id, "records": [...]}], or empty.
  virtual nlohmann::ordered_json unacknowledged() const { return nlohmann::ordered_json::array(); }
  // What a checkpoint carried (unacknowledged() of an earlier session): sent first.
  virtual void carry(const nlohmann::ordered_json& /*unacknowledged*/) {}
};

// Opens the target of `config` (a jsonl file is appended to, never truncated).
// E-METRICS-001 when the file cannot be opened. A syvain target is the one
// report::syvain_preflight prepared (metrics_syvain.h).
std::unique_ptr<MetricsTarget> open_metrics_target(const MetricsTargetConfig& config);
// The TensorBoard target: an event file in `dir` (made if missing), metrics_tensorboard.cpp.
std::unique_ptr<MetricsTarget> open_tensorboard_target(const std::string& dir);

}  // namespace sx::report
