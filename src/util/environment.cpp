#include "util/environment.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <ostream>
#include <thread>

#include "util/error.h"
#include "util/printable.h"

namespace sx {

namespace {

constexpr const char* kS3Required[] = {"ACCESS_KEY_ID", "SECRET_ACCESS_KEY", "ENDPOINT_URL", "REGION"};

// The found value as a message shows it: quoted, control characters escaped,
// cut short so a pasted file does not flood the terminal.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80 && ++n > 80) {
      out += "...";
      break;
    }
    if (c == '"' || c == '\\')
      out += '\\', out += static_cast<char>(c);
    else if (c < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);
  }
  return out + "\"";
}

bool is_flag(std::string_view source) { return source.starts_with("--"); }

// A flag's bad value is a usage error (E-CLI-002); a variable's is E-ENV-001.
[[noreturn]] void bad(std::string_view source, std::string_view expected, std::string_view found,
                      std::string help = {}) {
  throw UserError(is_flag(source) ? Code::CLI_002 : Code::ENV_001, Span{},
                  fmt::format("{}: expected {}, found {}", source, expected, quoted(without_userinfo(found))),
                  std::move(help));
}

// How the user would write the setting: "--resume latest" or "SEXPGPU_RESUME=latest".
std::string setting(std::string_view source, std::string_view value) {
  return fmt::format("{}{}{}", source, is_flag(source) ? " " : "=", value);
}

bool all_digits(std::string_view v) {
  return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Digits only, so "+5", "1e7" and "10_000" are refused rather than half-read.
std::optional<int64_t> to_int(std::string_view v) {
  int64_t n = 0;
  if (!all_digits(v)) return std::nullopt;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size()) return std::nullopt;
  return n;
}

int64_t positive_int(std::string_view v, std::string_view source, int64_t max, std::string_view example) {
  auto n = to_int(v);
  if (n && *n > 0 && *n <= max) return *n;
  std::string expected = "a positive integer";
  if (n && *n > max) expected = fmt::format("a positive integer up to {}", max);
  if (!n && all_digits(v)) expected = fmt::format("a positive integer up to {}", max);  // overflowed
  bad(source, expected, v, fmt::format("write the digits alone, e.g. {}", setting(source, example)));
}

// "12", "7.5", ".5": digits with at most one point, no sign, exponent or unit.
double positive_decimal(std::string_view v, std::string_view source, std::string_view unit,
                        std::string_view example) {
  size_t point = v.find('.');
  std::string_view whole = v.substr(0, point), frac = point == v.npos ? "" : v.substr(point + 1);
  bool ok = (all_digits(whole) || whole.empty()) && (point == v.npos || all_digits(frac)) &&
            !(whole.empty() && frac.empty());
  double d = 0;
  if (ok) {
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
    ok = ec == std::errc() && p == v.data() + v.size() && std::isfinite(d) && d > 0;
  }
  if (ok) return d;
  bad(source, fmt::format("a positive number of {}", unit), v,
      fmt::format("give the number alone, e.g. {}", setting(source, example)));
}

// One of a few words, with a did-you-mean when the value is a near miss.
std::string one_of(std::string_view v, std::string_view source, const std::vector<std::string>& words,
                   std::string_view expected, std::string fallback_help = {}) {
  if (std::find(words.begin(), words.end(), v) != words.end()) return std::string(v);
  std::string lower(v);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string near = nearest(lower, words);
  bad(source, expected, v, near.empty() ? fallback_help : fmt::format("did you mean `{}`?", near));
}

bool http_url(std::string_view v) {
  for (std::string_view scheme : {"http://", "https://"})
    if (v.starts_with(scheme) && v.size() > scheme.size() && v[scheme.size()] != '/') return true;
  return false;
}

std::string strip_trailing_slashes(std::string_view v) {
  while (v.size() > 1 && v.back() == '/') v.remove_suffix(1);
  return std::string(v);
}

std::optional<int64_t> step_of(std::string_view path) {
  std::string_view last = path.substr(path.rfind('/') + 1);  // npos + 1 == 0
  if (!last.starts_with("step-")) return std::nullopt;
  return to_int(last.substr(5));
}

// s3://bucket/prefix, or a local path. `what` is the message's expectation.
Location parse_location(std::string_view value, std::string_view source, std::string_view what) {
  std::string_view v = value;
  if (v.empty()) bad(source, what, v);
  Location loc;
  std::string lower(v.substr(0, 3));
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower != "s3:") {
    loc.text = strip_trailing_slashes(v);
    return loc;
  }
  // Anything that starts like an s3 URI must be one: "s3:/b/p" is a typo, not a local folder named "s3:".
  if (!v.starts_with("s3://")) bad(source, what, v, "an S3 location is written s3://bucket/prefix");
  std::string_view rest = v.substr(5);
  while (rest.ends_with('/')) rest.remove_suffix(1);
  size_t slash = rest.find('/');
  loc.s3 = true;
  loc.bucket = std::string(rest.substr(0, slash));
  loc.prefix = slash == rest.npos ? "" : std::string(rest.substr(slash + 1));
  bool bucket_ok = loc.bucket.size() >= 3 && loc.bucket.size() <= 63 &&
                   std::all_of(loc.bucket.begin(), loc.bucket.end(), [](unsigned char c) {
                     return std::islower(c) || std::isdigit(c) || c == '.' || c == '-' || c == '_';
                   });
  if (!bucket_ok) bad(source, what, v, "a bucket name is 3 to 63 lowercase letters, digits, '.', '-' or '_'");
  // Empty, "." and ".." components would make keys that other tools read differently.
  std::string_view p = loc.prefix;
  while (!p.empty()) {
    std::string_view part = p.substr(0, p.find('/'));
    if (part.empty() || part == "." || part == "..")
      bad(source, what, v, "the prefix may not contain empty, \".\" or \"..\" components");
    p.remove_prefix(std::min(p.size(), part.size() + 1));
  }
  loc.text = "s3://" + std::string(rest);
  return loc;
}

// "a, b ,c" -> {a, b, c}; nullopt when an item is empty ("a,,b", "a,").
std::optional<std::vector<std::string>> split_list(std::string_view v) {
  std::vector<std::string> items;
  for (std::string_view rest = v;;) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) return std::nullopt;
    items.emplace_back(item);
    if (comma == rest.npos) return items;
    rest.remove_prefix(comma + 1);
  }
}

std::string join(const std::vector<std::string>& items, std::string_view last_sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? std::string(last_sep) : ", ") + items[i];
  return out;
}

// Every core this process may run on (a container or taskset may allow fewer than the machine has).
int all_cores() {
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

void collect(std::vector<Diagnostic>& out, const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    out.insert(out.end(), e.diagnostics().begin(), e.diagnostics().end());
  }
}

}  // namespace

void PrintTo(const Secret& s, std::ostream* os) {
  *os << (s.set() ? "<secret from " + s.variable() + ">" : std::string("<unset secret>"));
}

std::string_view to_string(S3Role r) { return r == S3Role::data ? "data" : "checkpoint"; }
std::string_view to_string(Device d) { return d == Device::cpu ? "cpu" : "cuda"; }
std::string_view to_string(GradientPrecision p) { return p == GradientPrecision::f32 ? "f32" : "bf16"; }

std::vector<std::string> s3_variables(S3Role role, std::string_view name) {
  return {fmt::format("SEXPGPU_{}_AWS_{}", role == S3Role::data ? "DATA" : "CHECKPOINT", name),
          fmt::format("SEXPGPU_AWS_{}", name), fmt::format("AWS_{}", name)};
}

std::vector<std::string> S3Credentials::missing() const {
  std::vector<std::string> out;
  bool set[] = {access_key_id.set(), secret_access_key.set(), endpoint_url.set(), region.set()};
  for (size_t i = 0; i < 4; ++i)
    if (!set[i]) out.push_back(join(s3_variables(role, kS3Required[i]), " or "));
  return out;
}

std::string S3Credentials::redacted() const {
  auto from = [](const std::string& variable) { return variable.empty() ? "unset" : "from " + variable; };
  auto plain = [&](const Resolved& r) {
    return r.set() ? without_userinfo(r.value) + " " + from(r.variable) : "unset";
  };
  return fmt::format("{}: access key {}, secret key {}, session token {}, endpoint {}, region {}",
                     to_string(role), from(access_key_id.variable()), from(secret_access_key.variable()),
                     from(session_token.variable()), plain(endpoint_url), plain(region));
}

std::string Environment::syvain_folder() const {
  if (metrics && !metrics->folder_id.empty()) return metrics->folder_id;
  return syvain_folder_id.value_or("");
}

Device parse_device(std::string_view value, std::string_view source) {
  return one_of(value, source, {"cpu", "cuda"}, "cpu or cuda",
                "cpu, the default, runs anywhere; cuda needs the Linux CUDA binary") == "cpu"
             ? Device::cpu
             : Device::cuda;
}

MetricsTarget parse_metrics(std::string_view value, std::string_view source) {
  constexpr std::string_view expected = "jsonl:<path>, stdout, syvain or syvain:<folder-id>";
  MetricsTarget t;
  t.text = std::string(value);
  size_t colon = value.find(':');
  std::string_view head = value.substr(0, colon), rest = colon == value.npos ? "" : value.substr(colon + 1);
  if (value == "stdout") return t;
  if (head == "jsonl") {
    if (rest.empty())
      bad(source, expected, value,
          fmt::format("name the file, e.g. {}", setting(source, "jsonl:my-run.jsonl")));
    t.kind = MetricsTarget::Kind::jsonl;
    t.path = std::string(rest);
    return t;
  }
  if (head == "syvain" && (colon == value.npos || !rest.empty())) {
    t.kind = MetricsTarget::Kind::syvain;
    t.folder_id = std::string(rest);
    return t;
  }
  std::string help;
  std::string near = nearest(head, {"jsonl", "stdout", "syvain"});
  if (value.ends_with(".jsonl") || value.find('/') != value.npos)
    help = fmt::format("for a file, write {}", setting(source, "jsonl:" + std::string(value)));
  else if (!near.empty())
    help = fmt::format("did you mean `{}`?", near + (colon == value.npos ? "" : ":" + std::string(rest)));
  bad(source, expected, value, help);
}

std::string parse_status(std::string_view value, std::string_view source) {
  if (value.empty() || value.ends_with('/'))
    bad(source, "a file path", value, "name a file, e.g. my-run.status.json");
  return std::string(value);
}

Location parse_checkpoint_dir(std::string_view value, std::string_view source) {
  return parse_location(value, source, "a directory or s3://bucket/prefix");
}

ResumeFrom parse_resume(std::string_view value, std::string_view source) {
  constexpr std::string_view expected = "a directory, s3://bucket/prefix/step-<n>, or latest";
  ResumeFrom r;
  if (value == "latest") {
    r.latest = true;
    return r;
  }
  r.location = parse_location(value, source, expected);
  r.step = step_of(r.location.text);
  // The seed's S3 form names one checkpoint; a run's prefix alone is a common slip.
  if (r.location.s3 && !r.step)
    bad(source, expected, value, "name one checkpoint, s3://bucket/prefix/step-<n>, or resume from latest");
  return r;
}

std::vector<std::string> parse_diagnostics(std::string_view value, std::string_view source) {
  auto globs = split_list(value);
  if (!globs) bad(source, "comma-separated globs, e.g. attention/*,logits/*", value, "an item is empty");
  return *globs;
}

bool apply_flag(Environment& env, std::string_view flag, std::string_view value) {
  std::string src(flag);
  if (flag == "--device")
    env.device = parse_device(value, flag), env.device_source = src;
  else if (flag == "--metrics")
    env.metrics = parse_metrics(value, flag), env.metrics_source = src;
  else if (flag == "--status")
    env.status = parse_status(value, flag), env.status_source = src;
  else if (flag == "--checkpoint-dir")
    env.checkpoint_dir = parse_checkpoint_dir(value, flag), env.checkpoint_dir_source = src;
  else if (flag == "--resume")
    env.resume = parse_resume(value, flag), env.resume_source = src;
  else if (flag == "--diagnostics")
    env.diagnostics = parse_diagnostics(value, flag), env.diagnostics_source = src;
  else
    return false;
  return true;
}

void require_s3(const S3Credentials& creds, std::string_view needed_by) {
  std::vector<Diagnostic> diags;
  std::vector<std::string> names;
  Diagnostic d{Code::ENV_002, "", Span{}, {}, {}};
  bool set[] = {creds.access_key_id.set(), creds.secret_access_key.set(), creds.endpoint_url.set(),
                creds.region.set()};
  for (size_t i = 0; i < 4; ++i) {
    if (set[i]) continue;
    names.push_back(kS3Required[i]);
    d.notes.push_back(
        fmt::format("{}: set {}", kS3Required[i], join(s3_variables(creds.role, kS3Required[i]), " or ")));
  }
  if (!names.empty()) {
    d.message = fmt::format("{} needs the {} role's S3 {}, {} not set", needed_by, to_string(creds.role),
                            join(names, " and "), names.size() == 1 ? "which is" : "which are");
    d.help =
        "plain AWS_* is enough on most machines; a role needs all four values, ENDPOINT_URL included, even "
        "on AWS "
        "(e.g. https://s3.us-east-1.amazonaws.com)";
    diags.push_back(std::move(d));
  }
  if (creds.endpoint_url.set() && !http_url(creds.endpoint_url.value))
    collect(diags, [&] {
      bad(creds.endpoint_url.variable, "an http:// or https:// URL", creds.endpoint_url.value,
          "e.g. https://s3.us-east-1.amazonaws.com or http://localhost:9000");
    });
  if (!diags.empty()) throw UserError(std::move(diags));
}

void check_requirements(const Environment& env) {
  std::vector<Diagnostic> diags;
  auto missing = [&](std::string message, std::string help) {
    diags.push_back(Diagnostic{Code::ENV_002, std::move(message), Span{}, {}, std::move(help)});
  };
  if (env.metrics && env.metrics->kind == MetricsTarget::Kind::syvain) {
    std::string target = setting(env.metrics_source, env.metrics->text);
    if (!env.syvain_api_key.set())
      missing(fmt::format("the syvain metrics target ({}) needs SYVAIN_METRICS_API_KEY, which is not set",
                          target),
              "set SYVAIN_METRICS_API_KEY to your Metrics by 041 key");
    if (env.syvain_folder().empty())
      missing(fmt::format("the syvain metrics target ({}) needs a folder, and none is given", target),
              "write syvain:<folder-id>, or set SYVAIN_METRICS_FOLDER_ID");
  }
  // Checkpoints are written to and resumed from with the checkpoint role; report it once.
  std::string needed_by;
  if (env.checkpoint_dir && env.checkpoint_dir->s3)
    needed_by = fmt::format("the checkpoint location {}",
                            setting(env.checkpoint_dir_source, env.checkpoint_dir->text));
  else if (env.resume && !env.resume->latest && env.resume->location.s3)
    needed_by =
        fmt::format("the checkpoint to resume {}", setting(env.resume_source, env.resume->location.text));
  if (!needed_by.empty()) collect(diags, [&] { require_s3(env.s3_checkpoint, needed_by); });
  if (env.resume && env.resume->latest && !env.checkpoint_dir)
    missing(fmt::format("{} needs a checkpoint location to look in", setting(env.resume_source, "latest")),
            "set SEXPGPU_CHECKPOINT_DIR or --checkpoint-dir to where this run's checkpoints are");
  if (!diags.empty()) throw UserError(std::move(diags));
}

Environment parse_environment(const Getenv& getenv) {
  Environment env;
  std::vector<Diagnostic> errors;
  // Calls f with the value of `name` unless it is unset or empty, collecting its error.
  auto with = [&](const char* name, const std::function<void(std::string_view)>& f) {
    const char* v = getenv(name);
    if (v && *v) collect(errors, [&] { f(v); });
  };
  auto flagged = [&](const char* name, std::string& source, const std::function<void(std::string_view)>& f) {
    with(name, [&](std::string_view v) { f(v), source = name; });
  };
  flagged("SEXPGPU_DEVICE", env.device_source,
          [&](auto v) { env.device = parse_device(v, "SEXPGPU_DEVICE"); });
  flagged("SEXPGPU_METRICS", env.metrics_source,
          [&](auto v) { env.metrics = parse_metrics(v, "SEXPGPU_METRICS"); });
  flagged("SEXPGPU_STATUS", env.status_source,
          [&](auto v) { env.status = parse_status(v, "SEXPGPU_STATUS"); });
  flagged("SEXPGPU_CHECKPOINT_DIR", env.checkpoint_dir_source,
          [&](auto v) { env.checkpoint_dir = parse_checkpoint_dir(v, "SEXPGPU_CHECKPOINT_DIR"); });
  flagged("SEXPGPU_RESUME", env.resume_source,
          [&](auto v) { env.resume = parse_resume(v, "SEXPGPU_RESUME"); });
  flagged("SEXPGPU_DIAGNOSTICS", env.diagnostics_source,
          [&](auto v) { env.diagnostics = parse_diagnostics(v, "SEXPGPU_DIAGNOSTICS"); });

  with("SEXPGPU_DEVICES", [&](std::string_view v) {
    constexpr std::string_view expected = "comma-separated distinct CUDA ordinals, e.g. 0,1";
    auto items = split_list(v);
    if (!items) bad("SEXPGPU_DEVICES", expected, v, "an item is empty");
    for (const auto& item : *items) {
      auto n = to_int(item);
      if (!n || *n > 1023) bad("SEXPGPU_DEVICES", expected, v, fmt::format("\"{}\" is not an ordinal", item));
      if (std::find(env.devices.begin(), env.devices.end(), *n) != env.devices.end())
        bad("SEXPGPU_DEVICES", expected, v, fmt::format("ordinal {} appears twice", *n));
      env.devices.push_back(static_cast<int>(*n));
    }
  });
  env.threads = all_cores();
  with("SEXPGPU_THREADS", [&](auto v) { env.threads = positive_int(v, "SEXPGPU_THREADS", 65536, "8"); });
  with("SEXPGPU_MEMORY",
       [&](auto v) { env.memory_gib = positive_decimal(v, "SEXPGPU_MEMORY", "GiB", "7.5"); });
  with("SEXPGPU_EXPLAIN",
       [&](auto v) { one_of(v, "SEXPGPU_EXPLAIN", {"kernels"}, "kernels"), env.explain_kernels = true; });
  with("SEXPGPU_EVAL_LIMIT", [&](auto v) {
    env.eval_limit = positive_int(v, "SEXPGPU_EVAL_LIMIT", std::numeric_limits<int64_t>::max(), "20000000");
  });
  with("SEXPGPU_RUN_SLUG", [&](std::string_view v) {
    // The slug names a checkpoint folder and an experiment: one path component, no surprises.
    bool ok = !v.starts_with('.') && std::all_of(v.begin(), v.end(), [](unsigned char c) {
      return std::isalnum(c) || c == '.' || c == '_' || c == '-' || c == '=' || c == '+';
    });
    if (!ok)
      bad("SEXPGPU_RUN_SLUG", "a name of letters, digits, '.', '_', '-', '=' or '+' not starting with '.'",
          v);
    env.run_slug = std::string(v);
  });

  bool nodes_set = false, nodes_ok = true;
  with("SEXPGPU_NODES", [&](auto v) {
    nodes_ok = false;
    env.nodes = static_cast<int>(positive_int(v, "SEXPGPU_NODES", 65536, "2"));
    nodes_set = nodes_ok = true;
  });
  with("SEXPGPU_NODE_RANK", [&](std::string_view v) {
    auto n = to_int(v);
    if (!n) bad("SEXPGPU_NODE_RANK", "a node rank, 0 to SEXPGPU_NODES - 1", v);
    if (nodes_ok && *n >= env.nodes)
      bad("SEXPGPU_NODE_RANK", fmt::format("a node rank below SEXPGPU_NODES ({})", env.nodes), v,
          nodes_set ? fmt::format("ranks run from 0 to {}", env.nodes - 1)
                    : "set SEXPGPU_NODES on every node to how many nodes there are");
    env.node_rank = static_cast<int>(*n);
  });
  with("SEXPGPU_RENDEZVOUS", [&](std::string_view v) {
    constexpr std::string_view expected = "host:port where node 0 listens";
    size_t colon = v.rfind(':');
    std::string_view host = v.substr(0, colon), port = colon == v.npos ? "" : v.substr(colon + 1);
    if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);  // [::1]:29500
    auto p = to_int(port);
    if (host.empty() || !p || *p < 1 || *p > 65535)
      bad("SEXPGPU_RENDEZVOUS", expected, v, "e.g. SEXPGPU_RENDEZVOUS=node0.example.com:29500");
    env.rendezvous = Rendezvous{std::string(host), static_cast<int>(*p)};
  });
  const char* rendezvous = getenv("SEXPGPU_RENDEZVOUS");
  if (env.nodes > 1 && !(rendezvous && *rendezvous))  // a bad value is reported above
    errors.push_back(
        Diagnostic{Code::ENV_002,
                   fmt::format("SEXPGPU_NODES is {} but SEXPGPU_RENDEZVOUS is not set", env.nodes),
                   Span{},
                   {},
                   "set SEXPGPU_RENDEZVOUS=host:port, where node 0 listens, the same on every node"});
  with("SEXPGPU_NODE_GRADIENTS", [&](auto v) {
    env.node_gradients = one_of(v, "SEXPGPU_NODE_GRADIENTS", {"f32", "bf16"}, "f32 or bf16") == "f32"
                             ? GradientPrecision::f32
                             : GradientPrecision::bf16;
  });
  with("SEXPGPU_NODE_TIMEOUT",
       [&](auto v) { env.node_timeout_s = positive_decimal(v, "SEXPGPU_NODE_TIMEOUT", "seconds", "600"); });

  with("SYVAIN_METRICS_API_KEY",
       [&](auto v) { env.syvain_api_key = Secret(std::string(v), "SYVAIN_METRICS_API_KEY"); });
  with("SYVAIN_METRICS_FOLDER_ID", [&](auto v) { env.syvain_folder_id = std::string(v); });
  with("SYVAIN_METRICS_URL", [&](std::string_view v) {
    if (!http_url(v))
      bad("SYVAIN_METRICS_URL", "an http:// or https:// URL", v, "e.g. https://metrics.041.io/api/v1");
    env.syvain_url = std::string(v);
    while (env.syvain_url.ends_with('/')) env.syvain_url.pop_back();
  });

  for (S3Credentials* c : {&env.s3_data, &env.s3_checkpoint}) {
    auto resolve = [&](std::string_view name) -> std::pair<std::string, std::string> {
      for (const auto& var : s3_variables(c->role, name))
        if (const char* v = getenv(var.c_str()); v && *v) return {v, var};
      return {};
    };
    auto secret = [&](std::string_view name) {
      auto [v, var] = resolve(name);
      return Secret(std::move(v), std::move(var));
    };
    auto plain = [&](std::string_view name) {
      auto [v, var] = resolve(name);
      return Resolved{std::move(v), std::move(var)};
    };
    c->access_key_id = secret("ACCESS_KEY_ID");
    c->secret_access_key = secret("SECRET_ACCESS_KEY");
    c->session_token = secret("SESSION_TOKEN");
    c->endpoint_url = plain("ENDPOINT_URL");
    c->region = plain("REGION");
  }
  if (!errors.empty()) throw UserError(std::move(errors));
  return env;
}

const std::vector<std::string>& known_variables() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v = {"SEXPGPU_DEVICE",           "SEXPGPU_DEVICES",    "SEXPGPU_NODES",
                                  "SEXPGPU_NODE_RANK",        "SEXPGPU_RENDEZVOUS", "SEXPGPU_NODE_GRADIENTS",
                                  "SEXPGPU_NODE_TIMEOUT",     "SEXPGPU_METRICS",    "SEXPGPU_STATUS",
                                  "SEXPGPU_DIAGNOSTICS",      "SEXPGPU_RUN_SLUG",   "SEXPGPU_CHECKPOINT_DIR",
                                  "SEXPGPU_RESUME",           "SEXPGPU_EVAL_LIMIT", "SEXPGPU_THREADS",
                                  "SEXPGPU_MEMORY",           "SEXPGPU_EXPLAIN",    "SYVAIN_METRICS_API_KEY",
                                  "SYVAIN_METRICS_FOLDER_ID", "SYVAIN_METRICS_URL"};
    for (const char* name : {"ACCESS_KEY_ID", "SECRET_ACCESS_KEY", "ENDPOINT_URL", "REGION", "SESSION_TOKEN"})
      for (S3Role role : {S3Role::data, S3Role::checkpoint})
        for (auto& var : s3_variables(role, name))
          if (std::find(v.begin(), v.end(), var) == v.end()) v.push_back(var);
    return v;
  }();
  return names;
}

std::vector<std::string> unknown_variables(const std::vector<std::string>& names) {
  std::vector<std::string> warnings;
  for (const auto& name : names) {
    if (!name.starts_with("SEXPGPU_") && !name.starts_with("SYVAIN_")) continue;
    const auto& known = known_variables();
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string near = nearest(name, known);
    warnings.push_back(fmt::format("{} is not a variable sexpgpu reads{}", name,
                                   near.empty() ? "" : fmt::format("; did you mean {}?", near)));
  }
  return warnings;
}

}  // namespace sx
