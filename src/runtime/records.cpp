#include "runtime/records.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "util/error.h"
#include "util/fd_io.h"
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
    throw UserError(
        Code::METRICS_001, {},
        fmt::format("expected a writable metrics file at {}, found: {}", target->path, std::strerror(errno)),
        "check that the folder exists and is writable");
  owned_ = true;
  struct stat st {};
  regular_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
}

MetricsSink::~MetricsSink() {
  if (owned_) ::close(fd_);
}

void MetricsSink::fail(Code code, const std::string& message, const std::string& help) {
  failed_ = true;
  if (writing_) unwritten_ = *writing_;
  throw MetricsWriteError(code, {}, message, help);
}

// Linux makes a write visible to readers page by page (ext4 and tmpfs grow
// the file's size after each page is copied), so a line that crosses a page
// boundary can be seen cut there. A line that fits in what is left of its
// page is seen whole; when what would be left after it is too short for the
// next record (guessed from the recent ones), the line is padded with spaces
// before its newline to end the page, and the next one starts a fresh page.
// Spaces after a JSON object are still the same object on the same line.
std::string MetricsSink::page_padded(std::string line, int64_t offset) {
  constexpr size_t page = 4096;
  recent_[recent_next_++ % std::size(recent_)] = line.size();
  size_t next = 0;
  for (size_t n : recent_)
    if (n <= page) next = std::max(next, n);
  next += next / 8;  // records grow a little (a longer number, one more field): some headroom
  // What is left of the page this line ends in (also when the line itself had to cross a page).
  size_t end = static_cast<size_t>(offset) + line.size();
  size_t left = (page - end % page) % page;
  if (left > 0 && left < next) line.insert(line.size() - 1, left, ' ');
  return line;
}

void MetricsSink::write(const Json& record) {
  if (fd_ < 0 || failed_) return;
  writing_ = &record;
  std::string line = json_text(record) + "\n";
  std::string where = is_stdout_ ? "standard output" : path_;
  auto what = [&] {
    std::string kind = record.value("kind", "");
    return record.contains("step") ? fmt::format("the {} record of step {}", kind, record["step"].dump())
                                   : fmt::format("the {} record", kind);
  };
  auto failed_write = [&](int err) {
    std::string reason = err == EPIPE ? "it is closed (Broken pipe)" : std::strerror(err);
    fail(Code::METRICS_010, fmt::format("expected to write {} to {}, found: {}", what(), where, reason),
         "free space or fix the target, then continue with --resume latest (with --checkpoint-dir a checkpoint of "
         "this step is written first)");
  };
  int64_t before = -1;
  if (owned_) {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) failed_write(errno);
    if (st.st_nlink == 0)
      fail(Code::METRICS_011,
           fmt::format("expected to write {} to {}, found: the file (or its folder) was removed", what(), where),
           "keep the metrics file and its folder until the run ends, then continue with --resume latest");
    if (regular_) {
      before = st.st_size;
      line = page_padded(std::move(line), before);
      // Reserving the space first turns a full disk into an error before any byte is written.
      if (::fallocate(fd_, FALLOC_FL_KEEP_SIZE, before, static_cast<off_t>(line.size())) != 0 &&
          (errno == ENOSPC || errno == EDQUOT || errno == EFBIG))
        failed_write(errno);
    }
  }
  if (!write_all(fd_, line)) {
    int err = errno;
    // A write cut short (the disk filled up mid-line) leaves no part of its line behind.
    if (before >= 0) (void)!::ftruncate(fd_, before);
    failed_write(err);
  }
}

Json MetricsSink::describe() const {
  if (fd_ < 0) return nullptr;
  return is_stdout_ ? Json("stdout") : Json(path_);
}

std::string MetricsSink::line() const { return is_stdout_ ? "stdout" : "jsonl:" + path_; }

}  // namespace sx
