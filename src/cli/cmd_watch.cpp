// sexpgpu watch PATH: a run's status file or jsonl metrics, redrawn until the
// run ends (docs/watch.md). It only reads the file, so it works on another
// user's run or over a shared disk; it never writes anything.
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/commands.h"
#include "cli/watch_view.h"
#include "util/error.h"
#include "util/fd_io.h"
#include "util/printable.h"
#include "util/stop_signals.h"

namespace sx {

namespace {

size_t terminal_width() {
  winsize w{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  return 80;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A status file is one object of kind "status"; anything else with records is a jsonl file.
std::optional<watch::View> view_of(const std::string& path, const std::string& content, std::vector<double>& history) {
  nlohmann::json one = nlohmann::json::parse(content, nullptr, false);
  if (one.is_object() && one.value("kind", "") == "status") {
    watch::View v = watch::from_status(one, history);
    if (v.train_loss && (history.empty() || v.step != static_cast<int64_t>(history.size())))
      history.push_back(*v.train_loss), v.losses = history;
    return v;
  }
  watch::View v = watch::from_jsonl(content);
  if (!v.slug.empty() || !v.losses.empty()) return v;
  if (content.empty()) return std::nullopt;  // not written yet
  throw UserError(Code::CLI_060, {},
                  fmt::format("expected a status file or a jsonl metrics file at {}, found neither", path),
                  "give the file of --status or of --metrics jsonl:<path>");
}

double interval_of(const ParsedArgs& args) {
  auto text = args.last("--interval");
  if (!text) return 1.0;
  char* end = nullptr;
  double s = std::strtod(text->c_str(), &end);
  if (end == text->c_str() || *end != '\0' || !(s >= 0.05 && s <= 3600))
    throw UserError(Code::CLI_002, {},
                    fmt::format("--interval: expected seconds from 0.05 to 3600, found \"{}\"", *text),
                    "e.g. --interval 2");
  return s;
}

}  // namespace

const std::vector<FlagSpec>& watch_flags() {
  static const std::vector<FlagSpec> flags = {
      {"--interval", "SECONDS", "how often to read the file (default 1)"},
      {"--once", "", "draw the view once and exit"},
  };
  return flags;
}

ExitStatus cmd_watch(const ParsedArgs& args) {
  if (args.positional.size() != 1)
    throw UserError(Code::CLI_002, {}, "watch: expected one file (a status file or a jsonl metrics file)",
                    "sexpgpu watch my-run.status.json");
  const std::string& path = args.positional[0];
  const double interval = interval_of(args);
  const bool tty = ::isatty(STDOUT_FILENO) == 1, once = args.has("--once");
  std::vector<double> history;
  std::vector<std::string> shown;
  for (;;) {
    std::optional<std::string> content = read_file(path);
    std::optional<watch::View> v = content ? view_of(path, *content, history) : std::nullopt;
    std::vector<std::string> lines = v ? watch::render(*v, terminal_width())
                                       : std::vector<std::string>{fmt::format("waiting for {}", printable(path))};
    if (lines != shown) {
      std::string frame = tty ? "\x1b[H\x1b[J" : (shown.empty() ? "" : "\n");
      for (const auto& l : lines) frame += l + "\n";
      write_all(STDOUT_FILENO, frame);
      shown = lines;
    }
    if (once || (v && v->ended())) return ExitStatus::done;
    if (int sig = StopSignals::pending()) return static_cast<ExitStatus>(128 + sig);
    std::this_thread::sleep_for(std::chrono::duration<double>(interval));
  }
}

}  // namespace sx
