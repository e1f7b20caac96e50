#include "runtime/records.h"
#include "util/fd_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "util/error.h"
#include "util/printable.h"

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

MetricsSink::MetricsSink(const std::optional<MetricsTarget>& target) {
  if (!target) return;
  if (target->kind == MetricsTarget::Kind::standard_output) {
    fd_ = STDOUT_FILENO;
    is_stdout_ = true;
    return;
  }
  if (target->kind == MetricsTarget::Kind::syvain)
    throw UserError(Code::METRICS_002, {}, "the syvain metrics target is not part of this build yet",
                    "use --metrics jsonl:<path> or --metrics stdout for now");
  std::error_code ec;
  path_ = std::filesystem::absolute(target->path, ec).lexically_normal().string();
  if (ec) path_ = target->path;
  fd_ = ::open(target->path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw UserError(Code::METRICS_001, {},
                    fmt::format("expected a writable metrics file at {}, found: {}", target->path, std::strerror(errno)),
                    "check that the folder exists and is writable");
  owned_ = true;
}

MetricsSink::~MetricsSink() {
  if (owned_) ::close(fd_);
}

void MetricsSink::write(const Json& record) {
  if (fd_ < 0) return;
  write_all(fd_, json_text(record) + "\n");
}

Json MetricsSink::describe() const {
  if (fd_ < 0) return nullptr;
  return is_stdout_ ? Json("stdout") : Json(path_);
}

std::string MetricsSink::line() const { return is_stdout_ ? "stdout" : "jsonl:" + path_; }

void StatusFile::write(const Json& status) {
  if (path_.empty()) return;
  std::string tmp = path_ + ".tmp-" + std::to_string(::getpid());
  std::string text = json_text(status) + "\n";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = fd >= 0 && write_all(fd, text) && ::fsync(fd) == 0;
  if (fd >= 0) ::close(fd);
  ok = ok && std::rename(tmp.c_str(), path_.c_str()) == 0;
  if (!ok) {
    ::unlink(tmp.c_str());
    if (!warned_)
      std::cerr << one_line(fmt::format("warning: cannot write the status file {}: {}\n", path_, std::strerror(errno)));
    warned_ = true;
  }
}

}  // namespace sx
