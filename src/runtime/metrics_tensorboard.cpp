// --metrics tensorboard:<dir>: the step and eval records as TensorBoard
// scalars, by the jsonl records' names, in an event file of the folder. One
// file per process (TensorBoard reads every file of a folder in name order,
// so a resumed run's file comes after the one it resumes; its steps going
// back is TensorBoard's own rule: later events of the earlier file are dropped).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "runtime/metrics_targets.h"
#include "runtime/tfevents.h"
#include "util/error.h"
#include "util/fd_io.h"
#include "util/host_name.h"

namespace sx::report {

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// The scalars of a record: every number but the step, by the record's names;
// a pass other than `eval` prefixes its metrics as the console does ("probe:").
std::vector<std::pair<std::string, float>> scalars_of(const nlohmann::json& r) {
  std::vector<std::pair<std::string, float>> out;
  std::string kind = r.value("kind", "");
  if (kind != "step" && kind != "eval") return out;
  std::string prefix = kind == "eval" && r.value("pass", "eval") != "eval" ? r.value("pass", "") + ":" : "";
  for (const auto& [name, v] : r.items())
    if (v.is_number() && name != "step") out.emplace_back(prefix + name, v.get<float>());
  return out;
}

class TensorboardTarget final : public MetricsTarget {
 public:
  explicit TensorboardTarget(const std::string& dir) {
    std::error_code ec;
    dir_ = std::filesystem::absolute(dir, ec).lexically_normal().string();
    if (ec) dir_ = dir;
    std::filesystem::create_directories(dir_, ec);
    path_ = fmt::format("{}/events.out.tfevents.{:010d}.{}.{}.sexpgpu", dir_, static_cast<int64_t>(now_s()),
                        host_name().empty() ? "host" : host_name(), static_cast<int>(::getpid()));
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0 || !write_all(fd_, tfevents::record(tfevents::file_version_event(now_s()))))
      throw UserError(Code::METRICS_001, {},
                      fmt::format("expected a writable TensorBoard folder at {}, found: {}", dir_,
                                  std::strerror(ec ? ec.value() : errno)),
                      "check that the folder (or its parent) exists and is writable");
  }
  ~TensorboardTarget() override { ::close(fd_); }

  std::optional<AppendFailure> append(std::string line) override {
    nlohmann::json r = nlohmann::json::parse(line, nullptr, false);
    auto scalars = r.is_object() ? scalars_of(r) : decltype(scalars_of(r)){};
    if (scalars.empty()) return std::nullopt;
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return AppendFailure{errno, false};
    if (st.st_nlink == 0) return AppendFailure{0, true};
    // One write(2) per record, so that TensorBoard polling the file never reads half of one it keeps.
    if (!write_all(fd_, tfevents::record(tfevents::scalars_event(now_s(), r.value("step", int64_t{0}), scalars))))
      return AppendFailure{errno, false};
    return std::nullopt;
  }
  std::string where() const override { return path_; }
  std::string describe() const override { return dir_; }
  std::string line() const override { return "tensorboard:" + dir_; }

 private:
  int fd_ = -1;
  std::string dir_, path_;
};

}  // namespace

std::unique_ptr<MetricsTarget> open_tensorboard_target(const std::string& dir) {
  return std::make_unique<TensorboardTarget>(dir);
}

}  // namespace sx::report
