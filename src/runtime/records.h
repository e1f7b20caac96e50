#pragma once
// Where a run's numbers go: the metrics target (jsonl:<path>, stdout) and the
// status file. Lines are written whole, one write(2) each; the status file is
// replaced atomically (temporary file in the same folder, fsync, rename).
#include <nlohmann/json.hpp>
#include <string>

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

class MetricsSink {
 public:
  // Opens (appends to, never truncates) a jsonl file, or writes to standard
  // output. A file that cannot be opened is an E-METRICS error before the first step.
  explicit MetricsSink(const std::optional<MetricsTarget>& target);
  ~MetricsSink();
  bool enabled() const { return fd_ >= 0; }
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

 private:
  [[noreturn]] void fail(Code code, const std::string& message, const std::string& help);
  std::string page_padded(std::string line, int64_t offset);

  int fd_ = -1;
  bool owned_ = false;
  bool regular_ = false;  // a regular file: lines are placed to keep a polling reader off half a line
  bool failed_ = false;
  const Json* writing_ = nullptr;  // the record write() is writing, for fail()
  Json unwritten_;
  std::string path_;
  bool is_stdout_ = false;
  size_t recent_[8] = {};
  size_t recent_next_ = 0;
};

class StatusFile {
 public:
  // Refuses (E-ENV-010) a path that names something other than a regular file,
  // follows a symbolic link to its target, and removes the temporary files a
  // killed run left beside it. `source` is "--status" or "SEXPGPU_STATUS".
  StatusFile(const std::optional<std::string>& path, const std::string& source);
  bool enabled() const { return !path_.empty(); }
  // Replaces the file with `status`; an error writing it is reported once on
  // standard error and otherwise ignored: the status file must never stop a run.
  // `if_killed` is what a second stopping signal, which exits at once, leaves in it.
  void write(const Json& status, const Json* if_killed = nullptr);
  // As given on the command line.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string target_;  // the file replaced: path_, or what its symbolic link points to
  std::string temp_;    // <target>.tmp-<pid>
  bool warned_ = false;
};

}  // namespace sx
