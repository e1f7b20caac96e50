// sexpgpu doctor: what this build and this environment can do, one line per
// check — ok, warn or fail — with what to do. Nothing is trained and no secret
// is printed (a Secret cannot be formatted; only the variable it came from is).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "backend/cuda/driver/discovery.h"
#include "backend/cuda/rt/nvrtc.h"
#include "cli/commands.h"
#include "runtime/communicator.h"
#include "runtime/metrics_syvain.h"
#include "runtime/nccl_api.h"
#include "s3/client.h"
#include "util/printable.h"
#include "util/version.h"

extern char** environ;

namespace sx {

namespace {

namespace fs = std::filesystem;

struct Report {
  int failures = 0;
  void line(const char* level, const std::string& what, const std::string& text, const std::string& todo = {}) {
    if (std::string_view(level) == "fail") ++failures;
    std::cout << one_line(fmt::format("{:<4} {}: {}{}\n", level, what, text, todo.empty() ? "" : " — " + todo));
  }
};

bool secret_name(std::string_view name) {
  for (std::string_view s : {"SECRET", "KEY", "TOKEN", "PASSWORD"})
    if (name.find(s) != std::string_view::npos) return true;
  return false;
}

// The CUDA layer: the build, cuBLASLt, the driver and its devices (with free
// memory: doctor is the one place that opens a context only to look).
void check_cuda(Report& r) {
  if (!cuda::built_with_cuda()) {
    r.line("warn", "cuda", "this build has no CUDA: no device is opened and --device cuda is refused (E-DEV-001)",
           "train with --device cpu, or use a build with CUDA");
    return;
  }
  r.line("ok", "cuda",
         fmt::format("this build has CUDA (toolkit {}); the driver and cuBLASLt are loaded at run time",
                     cuda::toolkit_version()));
  const auto& lt = cuda::cublaslt();
  if (lt.api)
    r.line("ok", "cublaslt", fmt::format("{} loads (cuBLASLt {})", lt.path, cuda::cublaslt_version_text(*lt.api)));
  else
    r.line("warn", "cublaslt", fmt::format("libcublasLt.so.13 not found: {} (E-DEV-005)", lt.failure),
           "install the CUDA toolkit 13 or NVIDIA's cublas wheel to train on a GPU");
  auto devices = cuda::describe_devices(cuda::discover(cuda::driver(), true));
  r.line(devices.ok ? "ok" : "warn", "devices", devices.text, devices.todo);
}

void check_build(Report& r) {
  r.line("ok", "build", fmt::format("sexpgpu {}, CPU backend", SEXPGPU_VERSION));
  check_cuda(r);
  if (const auto& nvrtc = cuda::nvrtc(); nvrtc.library)
    r.line("ok", "nvrtc",
           fmt::format("{} loads (NVRTC {}): the cuda device compiles its kernels with it", nvrtc.path,
                       nvrtc.library->version()));
  else
    r.line("warn", "nvrtc", "NVRTC not found: explain --device cuda lists the kernels as not compiled",
           "install the CUDA toolkit 13 or NVIDIA's nvrtc wheel to train on a GPU (E-DEV-030)");
  if (const nccl::Library& n = nccl::library(); n.api)
    r.line("ok", "nccl",
           fmt::format("{} loads (NCCL {}): several GPUs of one run exchange their gradients with it", n.path,
                       nccl::version_text(n.version)));
  else
    r.line("warn", "nccl", fmt::format("libnccl.so.2 not found: {} (E-NODE-010)", n.failure),
           "install NCCL (the CUDA toolkit's, or NVIDIA's nvidia-nccl wheel) to train on several GPUs");
  if (have_gloo())
    r.line("ok", "gloo", "Gloo over TCP: runs across several nodes (SEXPGPU_NODES, docs/nodes.md)");
  else
    r.line("warn", "gloo", "this build has no Gloo: runs across several nodes are refused (E-NODE-001)");
  r.line("ok", "kernel cache",
         "compiled kernels are kept in $XDG_CACHE_HOME/sexpgpu/kernels (else ~/.cache/sexpgpu/kernels); clearing it "
         "is safe");
}

// Every SEXPGPU_*, SYVAIN_* and AWS_* variable that is set, parsed as `run` would.
std::optional<Environment> check_variables(Report& r) {
  std::vector<std::string> names;
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string_view::npos || eq + 1 == kv.size()) continue;
    std::string name(kv.substr(0, eq));
    if (name.rfind("SEXPGPU_", 0) == 0 || name.rfind("SYVAIN_", 0) == 0 || name.rfind("AWS_", 0) == 0)
      names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  for (const auto& w : unknown_variables(names)) r.line("warn", "variables", w);
  std::optional<Environment> env;
  std::vector<Diagnostic> bad;
  try {
    env = parse_environment();
  } catch (const UserError& e) {
    bad = e.diagnostics();
  }
  const auto& known = known_variables();
  for (const auto& name : names) {
    if (std::find(known.begin(), known.end(), name) == known.end()) continue;
    const Diagnostic* d = nullptr;
    for (const auto& b : bad)
      if (b.message.find(name) != std::string::npos) d = &b;
    if (d) {
      r.line("fail", name, fmt::format("{} [{}]", d->message, code_info(d->code).name), d->help);
    } else {
      std::string shown = secret_name(name) ? "set (not shown)" : fmt::format("`{}`", ::getenv(name.c_str()));
      r.line("ok", name, shown);
    }
  }
  for (const auto& b : bad)
    if (std::none_of(names.begin(), names.end(), [&](const auto& n) { return b.message.find(n) != std::string::npos; }))
      r.line("fail", "variables", fmt::format("{} [{}]", b.message, code_info(b.code).name), b.help);
  if (names.empty()) r.line("ok", "variables", "no SEXPGPU_*, SYVAIN_* or AWS_* variable is set: the defaults");
  if (env)
    r.line("ok", "threads",
           fmt::format("{} CPU threads{}", env->threads,
                       names.end() != std::find(names.begin(), names.end(), "SEXPGPU_THREADS") ? " (SEXPGPU_THREADS)"
                                                                                               : " (every core)"));
  return env;
}

// The folder a file would be written in: writable, or the nearest existing
// ancestor writable (sexpgpu makes the missing folders).
std::string writable(const std::string& path) {
  fs::path p = fs::path(path).parent_path();
  if (p.empty()) p = ".";
  std::error_code ec;
  while (!fs::exists(p, ec) && p.has_parent_path() && p != p.parent_path()) p = p.parent_path();
  if (!fs::is_directory(p, ec)) return fmt::format("{} is not a folder", p.string());
  if (access(p.c_str(), W_OK) != 0) return fmt::format("{} is not writable", p.string());
  return "";
}

void check_s3(Report& r, const S3Credentials& creds, const Location& where, const std::string& what) {
  if (!creds.complete()) {
    r.line("fail", what,
           fmt::format("{} needs the {} role's S3 credentials; missing {}", where.text, to_string(creds.role),
                       fmt::join(creds.missing(), "; ")),
           "set them (sexpgpu help E-ENV-002)");
    return;
  }
  s3::Config cfg = s3::config_from(creds);
  cfg.max_attempts = 1;
  cfg.connect_timeout_ms = 3000;
  cfg.request_timeout_ms = 10'000;
  cfg.list_page_size = 1;
  try {
    s3::Client client(cfg);
    client.list(where.bucket, where.prefix, "/");
    r.line("ok", what, fmt::format("{} reachable; {}", where.text, creds.redacted()));
  } catch (const UserError& e) {
    r.line("fail", what,
           fmt::format("{}: {} [{}]", where.text, e.diagnostics().front().message, code_info(e.code()).name),
           e.diagnostics().front().help);
  }
}

void check_locations(Report& r, const Environment& env) {
  if (!env.metrics) {
    r.line("ok", "metrics", "no target set (SEXPGPU_METRICS): records go nowhere unless --metrics is given");
  } else if (env.metrics->kind == MetricsTarget::Kind::jsonl) {
    std::string why = writable(env.metrics->path);
    if (why.empty())
      r.line("ok", "metrics", fmt::format("{} can be written", env.metrics->text));
    else
      r.line("fail", "metrics", fmt::format("{}: {}", env.metrics->text, why), "name a file in a writable folder");
  } else if (env.metrics->kind == MetricsTarget::Kind::tensorboard) {
    std::string why = writable(env.metrics->path + "/events.out.tfevents.doctor");
    if (why.empty())
      r.line("ok", "metrics", fmt::format("{}: the folder can be written", env.metrics->text));
    else
      r.line("fail", "metrics", fmt::format("{}: {}", env.metrics->text, why), "name a writable folder");
  } else if (env.metrics->kind == MetricsTarget::Kind::syvain) {
    try {
      report::SyvainProbe p = report::probe_syvain(env);
      if (p.refused)
        r.line("fail", "metrics",
               fmt::format("{} [{}]", p.refused->diagnostics().front().message, code_info(p.refused->code()).name),
               p.refused->diagnostics().front().help);
      else if (!p.unreachable.empty())
        r.line(
            "warn", "metrics",
            fmt::format("syvain folder {}: unreachable ({}); a run would spool its records", p.folder, p.unreachable),
            "check the network or SYVAIN_METRICS_URL; runs go on meanwhile");
      else
        r.line("ok", "metrics", fmt::format("syvain folder {}: the service accepts this key", p.folder));
    } catch (const UserError& e) {
      r.line("fail", "metrics", fmt::format("{} [{}]", e.diagnostics().front().message, code_info(e.code()).name),
             e.diagnostics().front().help);
    }
  } else {
    r.line("ok", "metrics", "stdout");
  }
  if (env.status) {
    std::string why = writable(*env.status);
    if (why.empty())
      r.line("ok", "status", fmt::format("{} can be written", *env.status));
    else
      r.line("fail", "status", fmt::format("{}: {}", *env.status, why), "name a file in a writable folder");
  }
  if (!env.checkpoint_dir) {
    r.line("ok", "checkpoints", "no location set (SEXPGPU_CHECKPOINT_DIR): :checkpoint-every writes nothing");
  } else if (env.checkpoint_dir->s3) {
    check_s3(r, env.s3_checkpoint, *env.checkpoint_dir, "checkpoints");
  } else {
    std::string why = writable(env.checkpoint_dir->text + "/x");
    if (why.empty())
      r.line("ok", "checkpoints", fmt::format("{} can be written", env.checkpoint_dir->text));
    else
      r.line("fail", "checkpoints", fmt::format("{}: {}", env.checkpoint_dir->text, why), "give a writable folder");
  }
}

}  // namespace

ExitStatus cmd_doctor(const ParsedArgs&) {
  Report r;
  check_build(r);
  if (auto env = check_variables(r)) check_locations(r, *env);
  std::cout << one_line(fmt::format("{}\n", r.failures ? fmt::format("{} failed", r.failures) : "nothing failed"));
  return r.failures ? ExitStatus::failed : ExitStatus::done;
}

}  // namespace sx
