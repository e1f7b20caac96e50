#pragma once
// Where metrics lines go (outputs.md, "Metrics"): each target is one class
// behind MetricsTarget, so a hosted target (syvain) is one more class. A
// target appends whole lines and says why one could not be appended; what a
// failed record means for the run is the MetricsSink's business (records.h).
#include <memory>
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
};

// Opens the target of `config` (a jsonl file is appended to, never truncated).
// E-METRICS-001 when the file cannot be opened, E-METRICS-002 for a target not
// part of this build.
std::unique_ptr<MetricsTarget> open_metrics_target(const MetricsTargetConfig& config);

}  // namespace sx::report
