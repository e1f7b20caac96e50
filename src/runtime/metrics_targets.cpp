#include "runtime/metrics_targets.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "runtime/metrics_syvain.h"
#include "util/error.h"
#include "util/fd_io.h"

namespace sx::report {

namespace {

class StdoutTarget final : public MetricsTarget {
 public:
  std::optional<AppendFailure> append(std::string line) override {
    if (!write_all(STDOUT_FILENO, line)) return AppendFailure{errno, false};
    return std::nullopt;
  }
  std::string where() const override { return "standard output"; }
  std::string describe() const override { return "stdout"; }
  std::string line() const override { return "stdout"; }
};

class JsonlTarget final : public MetricsTarget {
 public:
  explicit JsonlTarget(const std::string& path) {
    std::error_code ec;
    path_ = std::filesystem::absolute(path, ec).lexically_normal().string();
    if (ec) path_ = path;
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw UserError(Code::METRICS_001, {},
                      fmt::format("expected a writable metrics file at {}, found: {}", path, std::strerror(errno)),
                      "check that the folder exists and is writable");
    struct stat st {};
    regular_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
  }
  ~JsonlTarget() override { ::close(fd_); }

  std::optional<AppendFailure> append(std::string line) override {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return AppendFailure{errno, false};
    if (st.st_nlink == 0) return AppendFailure{0, true};
    int64_t before = -1;
    if (regular_) {
      before = st.st_size;
      line = page_padded(std::move(line), before);
      // Reserving the space first turns a full disk into an error before any byte is written.
      if (::fallocate(fd_, FALLOC_FL_KEEP_SIZE, before, static_cast<off_t>(line.size())) != 0 &&
          (errno == ENOSPC || errno == EDQUOT || errno == EFBIG))
        return AppendFailure{errno, false};
    }
    if (!write_all(fd_, line)) {
      int err = errno;
      // A write cut short (the disk filled up mid-line) leaves no part of its line behind.
      if (before >= 0) (void)!::ftruncate(fd_, before);
      return AppendFailure{err, false};
    }
    return std::nullopt;
  }
  std::string where() const override { return path_; }
  std::string describe() const override { return path_; }
  std::string line() const override { return "jsonl:" + path_; }

 private:
  std::string page_padded(std::string line, int64_t offset);

  int fd_ = -1;
  bool regular_ = false;  // a regular file: lines are placed to keep a polling reader off half a line
  std::string path_;
  size_t recent_[8] = {};
  size_t recent_next_ = 0;
};

// Linux makes a write visible to readers page by page (ext4 and tmpfs grow
// the file's size after each page is copied), so a line that crosses a page
// boundary can be seen cut there. A line that fits in what is left of its
// page is seen whole; when what would be left after it is too short for the
// next record (guessed from the recent ones), the line is padded with spaces
// before its newline to end the page, and the next one starts a fresh page.
// Spaces after a JSON object are still the same object on the same line.
std::string JsonlTarget::page_padded(std::string line, int64_t offset) {
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

}  // namespace

std::unique_ptr<MetricsTarget> open_metrics_target(const MetricsTargetConfig& config) {
  switch (config.kind) {
    case MetricsTargetConfig::Kind::standard_output:
      return std::make_unique<StdoutTarget>();
    case MetricsTargetConfig::Kind::tensorboard:
      return open_tensorboard_target(config.path);
    case MetricsTargetConfig::Kind::syvain:
      return open_syvain_target();
    default:
      return std::make_unique<JsonlTarget>(config.path);
  }
}

}  // namespace sx::report
