#include "runtime/records.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include "util/error.h"

namespace sx {

std::string json_text(const Json& record) { return record.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string rfc3339_now() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", buf, static_cast<int>(ms % 1000));
}

MetricsSink::MetricsSink(const std::optional<MetricsTargetConfig>& target) {
  if (target) target_ = report::open_metrics_target(*target);
}

MetricsSink::~MetricsSink() = default;

void MetricsSink::write(const Json& record) {
  if (!target_ || failed_) return;
  auto failure = target_->append(json_text(record) + "\n");
  if (!failure) return;
  failed_ = true;
  unwritten_ = record;
  std::string where = target_->where();
  std::string kind = record.value("kind", "");
  std::string what = record.contains("step") ? fmt::format("the {} record of step {}", kind, record["step"].dump())
                                             : fmt::format("the {} record", kind);
  if (failure->removed)
    throw MetricsWriteError(
        Code::METRICS_011, {},
        fmt::format("expected to write {} to {}, found: the file (or its folder) was removed", what, where),
        "keep the metrics file and its folder until the run ends, then continue with --resume latest");
  std::string reason = failure->err == EPIPE ? "it is closed (Broken pipe)" : std::strerror(failure->err);
  throw MetricsWriteError(Code::METRICS_010, {},
                          fmt::format("expected to write {} to {}, found: {}", what, where, reason),
                          "free space or fix the target, then continue with --resume latest (with --checkpoint-dir a "
                          "checkpoint of this step is written first)");
}

Json MetricsSink::describe() const {
  if (!target_) return nullptr;
  return Json(target_->describe());
}

std::string MetricsSink::line() const { return target_ ? target_->line() : "jsonl:"; }

}  // namespace sx
