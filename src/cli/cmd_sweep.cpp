// sexpgpu sweep FILE [--set k=a,b,...]... [--variant v1,v2] [--parallel N] [--dir D] [--json]
//
// Each run is its own `sexpgpu run` process (this same binary), so no state of
// one run can reach another, each gets its share of the cores, and a run that
// fails or crashes cannot take the others with it. Runs are named by slug, never
// by their index in the grid, so a changed grid never renames a run's files.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/commands.h"
#include "cli/sweep.h"
#include "lang/frontend.h"
#include "lang/interp.h"
#include "util/host_name.h"
#include "util/printable.h"
#include "util/sha256.h"
#include "util/stop_signals.h"
#include "util/version.h"

extern char** environ;

namespace sx {

using sweep::Run;
using json = nlohmann::ordered_json;

const std::vector<FlagSpec>& sweep_flags() {
  static const std::vector<FlagSpec> flags = [] {
    std::vector<FlagSpec> f = selection_flags();
    f[0].value = "V1,V2";
    f[0].help = "the variants to sweep, comma-separated";
    f[1].value = "KNOB=A,B,...";
    f[1].help = "one axis of the grid: a knob and its values (repeatable); replaces the file's defsweep";
    f.push_back({"--parallel", "N", "how many runs at once (default 1); each gets SEXPGPU_THREADS / N threads"});
    f.push_back({"--dir", "D", "the sweep folder (default .sexpgpu/sweep/<stem>/ beside the file)"});
    f.push_back({"--json", "", "one summary object per run on standard output, instead of the table"});
    return f;
  }();
  return flags;
}

namespace {

namespace fs = std::filesystem;

std::vector<std::string> split_commas(const std::string& text, const std::string& what) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) out.push_back(item);
  if (!text.empty() && text.back() == ',') out.emplace_back();
  for (const auto& v : out)
    if (v.empty())
      throw UserError(Code::CLI_031, {},
                      fmt::format("{} expected comma-separated values, found `{}`, which has an empty one", what, text),
                      "write the values as a,b,c");
  if (out.empty()) throw UserError(Code::CLI_031, {}, fmt::format("{} expected at least one value, found none", what));
  return out;
}

struct Axis {
  std::string knob;
  std::vector<std::string> values;
};

std::vector<Axis> grid_axes(const ParsedArgs& args, const std::string& file, const Selection& base,
                            const Environment& env, const std::vector<std::string>& variants) {
  std::vector<Axis> axes;
  for (const auto& [flag, value] : args.flags) {
    if (flag != "--set") continue;
    auto eq = value.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UserError(Code::CLI_031, {}, fmt::format("`--set` expected KNOB=A,B,..., found `{}`", value),
                      "for example --set lr=1e-3,3e-3");
    Axis a{value.substr(0, eq), split_commas(value.substr(eq + 1), "`--set " + value.substr(0, eq) + "=`")};
    for (const auto& other : axes)
      if (other.knob == a.knob)
        throw UserError(Code::CLI_031, {}, fmt::format("`--set {}` is given twice", a.knob),
                        "list all its values in one --set, comma-separated");
    axes.push_back(std::move(a));
  }
  if (!axes.empty()) return axes;
  // No grid on the command line: the file's defsweep, read under the first variant.
  Selection sel = base;
  sel.variant = variants.front();
  auto interp = load_experiment(file, sel, env.eval_limit, StopSignals::flag());
  const Experiment& x = interp->experiment();
  if (!x.sweep) return axes;
  for (const auto& [knob, values] : x.sweep->grid) {
    Axis a{knob, {}};
    for (const auto& v : values) a.values.push_back(canonical(*v));
    axes.push_back(std::move(a));
  }
  return axes;
}

// The slug `sexpgpu run` will give the selection. A selection the file refuses
// (a value out of range) still runs, to fail with its own code in its own
// status file; its slug is then made from the values as written.
std::string slug_of(const std::string& file, Selection sel, const Environment& env, const Run& r) {
  sel.variant = r.variant;
  for (const auto& [k, v] : r.sets) add_set(sel, k + "=" + v);
  try {
    return load_experiment(file, sel, env.eval_limit, StopSignals::flag())->experiment().slug;
  } catch (const UserError&) {
    auto sets = r.sets;
    std::sort(sets.begin(), sets.end());
    return make_slug(env.run_slug ? *env.run_slug : file_stem(file), r.variant, sets);
  }
}

std::vector<Run> grid_runs(const std::vector<std::string>& variants, const std::vector<Axis>& axes) {
  std::vector<Run> runs;
  for (const auto& variant : variants) {
    std::vector<size_t> at(axes.size(), 0);
    while (true) {
      Run r;
      r.variant = variant;
      for (size_t k = 0; k < axes.size(); ++k) r.sets.emplace_back(axes[k].knob, axes[k].values[at[k]]);
      runs.push_back(std::move(r));
      size_t k = axes.size();
      while (k > 0 && ++at[k - 1] == axes[k - 1].values.size()) at[--k] = 0;
      if (k == 0) break;
    }
  }
  return runs;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(Code::CLI_002, {}, fmt::format("cannot read the experiment file {}", path));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

json manifest_of(const std::string& file, const std::vector<Run>& runs, const ParsedArgs& args) {
  json selection = json::object();
  for (const char* flag : {"--steps", "--eval-every", "--diagnostics"})
    if (auto v = args.last(flag)) selection[flag + 2] = *v;
  json list = json::array();
  for (const auto& r : runs) {
    json sets = json::object();
    for (const auto& [k, v] : r.sets) sets[k] = v;
    list.push_back({{"slug", r.slug}, {"variant", r.variant}, {"sets", sets}});
  }
  return {{"kind", "sweep"},        {"version", SEXPGPU_VERSION},
          {"file", file},           {"sha256", sha256_hex(read_text(file))},
          {"selection", selection}, {"runs", list}};
}

// A re-run must be the same sweep: the same file, grid, selection and version,
// or its runs would resume checkpoints of other runs under the same folder.
void check_manifest(const std::string& path, const json& now) {
  std::ifstream in(path);
  if (!in) {
    std::ofstream out(path);
    out << now.dump(1) << "\n";
    if (!out)
      throw UserError(Code::CLI_032, {},
                      fmt::format("cannot write the sweep manifest {}: {}", path, std::strerror(errno)),
                      "give a writable folder with --dir");
    return;
  }
  json before = json::parse(in, nullptr, false);
  std::vector<std::string> changes;
  if (before.is_discarded() || !before.is_object() || before.value("kind", "") != "sweep") {
    changes.push_back("the manifest is not a sweep manifest");
  } else {
    if (before["sha256"] != now["sha256"]) changes.push_back("the experiment file changed (its SHA-256 differs)");
    if (before["version"] != now["version"])
      changes.push_back(
          fmt::format("the sexpgpu version changed ({} to {})", before["version"].dump(), now["version"].dump()));
    if (before["selection"] != now["selection"])
      changes.push_back(
          fmt::format("the selection changed ({} to {})", before["selection"].dump(), now["selection"].dump()));
    std::vector<std::string> old_slugs, new_slugs;
    for (const auto& r : before["runs"]) old_slugs.push_back(r.value("slug", ""));
    for (const auto& r : now["runs"]) new_slugs.push_back(r["slug"].get<std::string>());
    std::vector<std::string> added, removed;
    for (const auto& s : new_slugs)
      if (std::find(old_slugs.begin(), old_slugs.end(), s) == old_slugs.end()) added.push_back(s);
    for (const auto& s : old_slugs)
      if (std::find(new_slugs.begin(), new_slugs.end(), s) == new_slugs.end()) removed.push_back(s);
    if (!added.empty()) changes.push_back(fmt::format("the grid adds {}", fmt::join(added, ", ")));
    if (!removed.empty()) changes.push_back(fmt::format("the grid drops {}", fmt::join(removed, ", ")));
  }
  if (!changes.empty())
    throw UserError(Code::CLI_030, {}, fmt::format("{} holds another sweep: {}", path, fmt::join(changes, "; ")),
                    "run this sweep in another folder (--dir), or delete the folder to start the old one over");
}

// The run's lock: flock(2) on D/<slug>.lock, held by its process until it
// exits (a sweep killed hard leaves no stale lock). The file says who holds it.
int take_lock(const std::string& path, std::string& holder) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    throw UserError(Code::CLI_032, {}, fmt::format("cannot open the run lock {}: {}", path, std::strerror(errno)));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[512] = {};
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    holder = n > 0 ? std::string(buf, n) : "another process";
    while (!holder.empty() && holder.back() == '\n') holder.pop_back();
    ::close(fd);
    return -1;
  }
  return fd;
}

void write_holder(int fd, pid_t pid) {
  auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char when[64];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::string text = fmt::format("pid {} on {} since {}\n", pid, host_name(), when);
  if (ftruncate(fd, 0) == 0 && pwrite(fd, text.data(), text.size(), 0) < 0) {
    // The lock holds without its description; only a message would lack it.
  }
}

struct Launch {
  std::vector<std::string> argv;
  std::vector<std::string> envp;
  std::string log;
};

pid_t start(const Launch& l, int lock_fd) {
  std::vector<char*> argv, envp;
  for (const auto& a : l.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : l.envp) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int log = ::open(l.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0)
    throw UserError(Code::CLI_032, {}, fmt::format("cannot open the run log {}: {}", l.log, std::strerror(errno)));
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    // Its own process group, so a Ctrl-C at the terminal reaches only the sweep,
    // which forwards one SIGTERM (a second signal would stop the run at once).
    setpgid(0, 0);
    // A sweep killed hard asks its runs to checkpoint and stop.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(128 + SIGTERM);
    int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
    dup2(log, 1);
    dup2(log, 2);
    fcntl(lock_fd, F_SETFD, 0);  // the run holds its lock until it exits
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve("/proc/self/exe", argv.data(), envp.data());
    dprintf(2, "sexpgpu sweep: cannot start /proc/self/exe: %s\n", std::strerror(errno));
    _exit(127);
  }
  ::close(log);
  if (pid < 0) throw UserError(Code::CLI_032, {}, fmt::format("cannot start a run: fork: {}", std::strerror(errno)));
  return pid;
}

std::string prior_state(const std::string& status_path) {
  std::ifstream in(status_path);
  if (!in) return "";
  json j = json::parse(in, nullptr, false);
  return !j.is_discarded() && j.is_object() && j["state"].is_string() ? j["state"].get<std::string>() : "";
}

int64_t parallel_flag(const ParsedArgs& args) {
  auto text = args.last("--parallel");
  if (!text) return 1;
  char* end = nullptr;
  long long v = std::strtoll(text->c_str(), &end, 10);
  if (text->empty() || *end || v < 1)
    throw UserError(Code::CLI_002, {},
                    fmt::format("`--parallel` expected an integer of at least 1, found `{}`", *text));
  return v;
}

}  // namespace

ExitStatus cmd_sweep(const ParsedArgs& args) {
  const std::string& file = file_argument(args, "sweep");
  Environment env = command_environment(args);
  check_requirements(env);
  refuse_unbuilt_devices(env);
  use_cpu_bf16(env);  // refused here, before any variant starts (each run applies it itself)
  int64_t parallel = parallel_flag(args);

  ParsedArgs base_args;
  for (const auto& f : args.flags)
    if (f.first == "--steps" || f.first == "--eval-every" || f.first == "--diagnostics") base_args.flags.push_back(f);
  Selection base = selection_from(base_args, env);
  std::vector<std::string> variants = {""};
  if (auto v = args.last("--variant")) variants = split_commas(*v, "`--variant`");

  std::vector<Run> runs = grid_runs(variants, grid_axes(args, file, base, env, variants));
  for (auto& r : runs) r.slug = slug_of(file, base, env, r);
  for (size_t a = 0; a < runs.size(); ++a)
    for (size_t b = a + 1; b < runs.size(); ++b)
      if (runs[a].slug == runs[b].slug)
        throw UserError(Code::CLI_031, {},
                        fmt::format("two selections of the grid have the same slug {}", runs[a].slug),
                        "list each value once");

  std::string dir = args.last("--dir").value_or(
      (fs::path(file).parent_path() / ".sexpgpu" / "sweep" / file_stem(file)).lexically_normal().string());
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw UserError(Code::CLI_032, {},
                    fmt::format("cannot make the sweep folder {}: {}", dir, ec ? ec.message() : "not a directory"),
                    "give a writable folder with --dir");
  check_manifest(dir + "/sweep.json", manifest_of(file, runs, args));

  std::vector<size_t> todo;
  for (size_t k = 0; k < runs.size(); ++k) {
    runs[k].prior_state = prior_state(dir + "/" + runs[k].slug + ".status.json");
    if (runs[k].prior_state != "done") todo.push_back(k);
  }
  int64_t at_once = std::max<int64_t>(1, std::min<int64_t>(parallel, todo.size()));
  int threads = std::max<int>(1, env.threads / static_cast<int>(at_once));
  std::cerr << one_line(fmt::format("sweep: {} runs in {} ({} done before), {} at once, {} threads each\n", runs.size(),
                                    dir, runs.size() - todo.size(), at_once, threads));

  std::vector<std::string> inherited;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "SEXPGPU_THREADS=", 16) != 0) inherited.emplace_back(*e);
  inherited.push_back(fmt::format("SEXPGPU_THREADS={}", threads));

  std::map<pid_t, size_t> running;
  size_t next = 0;
  bool forwarded = false;
  while (next < todo.size() || !running.empty()) {
    bool stopping = StopSignals::pending() != 0;
    if (stopping && !forwarded) {
      for (const auto& [pid, k] : running) kill(pid, SIGTERM);
      forwarded = true;
    }
    while (!stopping && next < todo.size() && static_cast<int64_t>(running.size()) < at_once) {
      Run& r = runs[todo[next++]];
      int lock = take_lock(dir + "/" + r.slug + ".lock", r.busy);
      if (lock < 0) {
        std::cerr << one_line(fmt::format("sweep: {} is already running ({}); left alone\n", r.slug, r.busy));
        continue;
      }
      Launch l;
      l.argv = {"sexpgpu", "run", file};
      if (!r.variant.empty()) l.argv.insert(l.argv.end(), {"--variant", r.variant});
      for (const auto& [k, v] : r.sets) l.argv.insert(l.argv.end(), {"--set", k + "=" + v});
      for (const auto& [flag, value] : base_args.flags) l.argv.insert(l.argv.end(), {flag, value});
      l.argv.insert(l.argv.end(), {"--metrics", "jsonl:" + dir + "/" + r.slug + ".jsonl", "--status",
                                   dir + "/" + r.slug + ".status.json", "--resume", "latest"});
      if (!env.checkpoint_dir) l.argv.insert(l.argv.end(), {"--checkpoint-dir", dir + "/checkpoints"});
      l.envp = inherited;
      l.log = dir + "/" + r.slug + ".log";
      pid_t pid = start(l, lock);
      write_holder(lock, pid);
      ::close(lock);
      r.launched = true;
      running[pid] = todo[next - 1];
      std::cerr << one_line(fmt::format("sweep: start {} (pid {}, log {})\n", r.slug, pid, l.log));
    }
    int wstatus = 0;
    pid_t pid = waitpid(-1, &wstatus, WNOHANG);
    if (pid > 0 && running.count(pid)) {
      Run& r = runs[running[pid]];
      running.erase(pid);
      r.exit_status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
      std::cerr << one_line(fmt::format("sweep: {} ended, exit {}\n", r.slug, r.exit_status));
    } else if (pid <= 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  std::vector<sweep::Summary> rows;
  for (const auto& r : runs) rows.push_back(sweep::summarize(dir, r));
  std::cout << (args.has("--json") ? sweep::json_lines(rows) : sweep::table(rows));
  for (const auto& s : rows)
    if (s.state != "done") return ExitStatus::failed;
  return ExitStatus::done;
}

}  // namespace sx
