// sexpgpu report RUN.jsonl... | SWEEP-DIR [-o report.html]: one HTML file
// with the runs' curves, marks, final metrics and knobs (docs/report.md). It
// only reads the runs' files; the page is written whole or not at all.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/report_html.h"
#include "util/error.h"
#include "util/fd_io.h"
#include "util/printable.h"

namespace sx {

namespace {

UserError unwritable(const std::string& path, const std::string& why) {
  return UserError(Code::CLI_061, {}, fmt::format("cannot write the report {}: {}", path, why),
                   "give a writable file with -o, e.g. -o /tmp/report.html");
}

// Into a temporary file beside `path`, renamed over it: a browser reloading
// the report never reads half of one.
void write_whole(const std::string& path, const std::string& text) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw unwritable(path, "it is a folder");
  std::filesystem::path target(path);
  std::string temp =
      (target.parent_path() / ("." + target.filename().string() + ".tmp" + std::to_string(getpid()))).string();
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw unwritable(path, std::strerror(errno));
  bool ok = write_all(fd, text);
  int saved = errno;
  if (::close(fd) != 0 && ok) ok = false, saved = errno;
  if (ok && ::rename(temp.c_str(), path.c_str()) != 0) ok = false, saved = errno;
  if (!ok) {
    ::unlink(temp.c_str());
    throw unwritable(path, std::strerror(saved));
  }
}

}  // namespace

const std::vector<FlagSpec>& report_flags() {
  static const std::vector<FlagSpec> flags = {
      {"-o", "REPORT.html", "where to write the report (default report.html in the working directory)"},
  };
  return flags;
}

ExitStatus cmd_report(const ParsedArgs& args) {
  report::Report r = report::read_report(args.positional);
  const std::string out = args.last("-o").value_or("report.html");
  std::string page = report::html_page(r);
  write_whole(out, page);
  std::cout << one_line(fmt::format("report: {} ({} {}, {} charts)\n", out, r.runs.size(),
                                    r.runs.size() == 1 ? "run" : "runs", report::charts(r).size()));
  return ExitStatus::done;
}

}  // namespace sx
