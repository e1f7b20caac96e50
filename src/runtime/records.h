#pragma once
// Where a run's numbers go: the metrics target (jsonl:<path>, stdout) and the
// status file. Lines are written whole, one write(2) each; the status file is
// replaced atomically (temporary file in the same folder, fsync, rename).
#include <nlohmann/json.hpp>

#include <string>

#include "util/environment.h"

namespace sx {

using Json = nlohmann::ordered_json;

// One line of JSON. Bytes that are not UTF-8 (a tensor name read from a file,
// quoted in an error) are written as U+FFFD rather than refused.
std::string json_text(const Json& record);

// "2026-11-29T10:00:00.000Z": RFC 3339 UTC with milliseconds.
std::string rfc3339_now();

class MetricsSink {
 public:
  // Opens (appends to, never truncates) a jsonl file, or writes to standard
  // output. A file that cannot be opened is an E-METRICS error before the first step.
  explicit MetricsSink(const std::optional<MetricsTarget>& target);
  ~MetricsSink();
  bool enabled() const { return fd_ >= 0; }
  void write(const Json& record);
  // The target as the summary names it: the absolute path of a jsonl file, "stdout", or null.
  Json describe() const;
  // "jsonl:/abs/path" or "stdout", for the `metrics:` line.
  std::string line() const;

 private:
  int fd_ = -1;
  bool owned_ = false;
  std::string path_;
  bool is_stdout_ = false;
};

class StatusFile {
 public:
  explicit StatusFile(const std::optional<std::string>& path) : path_(path.value_or("")) {}
  bool enabled() const { return !path_.empty(); }
  // Replaces the file with `status`; an error writing it is reported once on
  // standard error and otherwise ignored: the status file must never stop a run.
  void write(const Json& status);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool warned_ = false;
};

}  // namespace sx
