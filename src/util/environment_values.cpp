#include "util/environment_values.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <thread>

#include "util/printable.h"

namespace sx {
namespace env_values {

namespace {

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
double positive_decimal(std::string_view v, std::string_view source, std::string_view unit, std::string_view example) {
  size_t point = v.find('.');
  std::string_view whole = v.substr(0, point), frac = point == v.npos ? "" : v.substr(point + 1);
  bool ok =
      (all_digits(whole) || whole.empty()) && (point == v.npos || all_digits(frac)) && !(whole.empty() && frac.empty());
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

}  // namespace

void bad(std::string_view source, std::string_view expected, std::string_view found, std::string help) {
  throw UserError(is_flag(source) ? Code::CLI_002 : Code::ENV_001, Span{},
                  fmt::format("{}: expected {}, found {}", source, expected, quoted(without_userinfo(found))),
                  std::move(help));
}

std::string setting(std::string_view source, std::string_view value) {
  return fmt::format("{}{}{}", source, is_flag(source) ? " " : "=", value);
}

bool http_url(std::string_view v) {
  for (std::string_view scheme : {"http://", "https://"})
    if (v.starts_with(scheme) && v.size() > scheme.size() && v[scheme.size()] != '/') return true;
  return false;
}

std::string join(const std::vector<std::string>& items, std::string_view last_sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? std::string(last_sep) : ", ") + items[i];
  return out;
}

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

std::vector<int> parse_devices(std::string_view v, std::string_view source) {
  constexpr std::string_view expected = "comma-separated distinct CUDA ordinals, e.g. 0,1";
  auto items = split_list(v);
  if (!items) bad(source, expected, v, "an item is empty");
  std::vector<int> devices;
  for (const auto& item : *items) {
    auto n = to_int(item);
    if (!n || *n > 1023) bad(source, expected, v, fmt::format("\"{}\" is not an ordinal", item));
    if (std::find(devices.begin(), devices.end(), *n) != devices.end())
      bad(source, expected, v, fmt::format("ordinal {} appears twice", *n));
    devices.push_back(static_cast<int>(*n));
  }
  return devices;
}

int parse_nodes(std::string_view v, std::string_view source) {
  return static_cast<int>(positive_int(v, source, 65536, "2"));
}

int parse_node_rank(std::string_view v, std::string_view source) {
  auto n = to_int(v);
  if (!n) bad(source, "a node rank, 0 to SEXPGPU_NODES - 1", v);
  // (a rank past int is past any SEXPGPU_NODES, and is reported so)
  return static_cast<int>(std::min<int64_t>(*n, std::numeric_limits<int>::max()));
}

Rendezvous parse_rendezvous(std::string_view v, std::string_view source) {
  constexpr std::string_view expected = "host:port where node 0 listens";
  size_t colon = v.rfind(':');
  std::string_view host = v.substr(0, colon), port = colon == v.npos ? "" : v.substr(colon + 1);
  if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);  // [::1]:29500
  auto p = to_int(port);
  if (host.empty() || !p || *p < 1 || *p > 65535)
    bad(source, expected, v, "e.g. SEXPGPU_RENDEZVOUS=node0.example.com:29500");
  return Rendezvous{std::string(host), static_cast<int>(*p)};
}

CpuBf16 parse_cpu_bf16(std::string_view v, std::string_view source) {
  return one_of(v, source, {"exact", "amx"}, "exact or amx") == "exact" ? CpuBf16::exact : CpuBf16::amx;
}

GradientPrecision parse_node_gradients(std::string_view v, std::string_view source) {
  return one_of(v, source, {"f32", "bf16"}, "f32 or bf16") == "f32" ? GradientPrecision::f32 : GradientPrecision::bf16;
}

double parse_node_timeout(std::string_view v, std::string_view source) {
  return positive_decimal(v, source, "seconds", "600");
}

std::string parse_node_address(std::string_view v, std::string_view source) {
  std::string text(v);
  unsigned char buf[sizeof(in6_addr)];
  if (inet_pton(AF_INET, text.c_str(), buf) != 1 && inet_pton(AF_INET6, text.c_str(), buf) != 1)
    bad(source, "a numeric IPv4 or IPv6 address", v, "e.g. SEXPGPU_NODE_ADDRESS=10.0.0.2");
  return text;
}

std::string parse_run_slug(std::string_view v, std::string_view source) {
  // The slug names a checkpoint folder and an experiment: one path component, no surprises.
  bool ok = !v.starts_with('.') && std::all_of(v.begin(), v.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '-' || c == '=' || c == '+';
  });
  if (!ok) bad(source, "a name of letters, digits, '.', '_', '-', '=' or '+' not starting with '.'", v);
  return std::string(v);
}

int64_t parse_eval_limit(std::string_view v, std::string_view source) {
  return positive_int(v, source, std::numeric_limits<int64_t>::max(), "20000000");
}

int parse_threads(std::string_view v, std::string_view source) {
  return static_cast<int>(positive_int(v, source, 65536, "8"));
}

double parse_memory(std::string_view v, std::string_view source) { return positive_decimal(v, source, "GiB", "7.5"); }

bool parse_explain(std::string_view v, std::string_view source) {
  one_of(v, source, {"kernels"}, "kernels");
  return true;
}

// How many emulated devices are visible: 0 (none: the real GPU), 1, or several for SEXPGPU_DEVICES.
int parse_cuda_emulate(std::string_view v, std::string_view source) {
  constexpr int64_t kMaxEmulated = 16;
  auto n = to_int(v);
  if (!n || *n > kMaxEmulated)
    bad(source, fmt::format("0, 1, or a number of emulated devices up to {}", kMaxEmulated), v,
        fmt::format("e.g. {}", setting(source, "2")));
  return static_cast<int>(*n);
}

Secret parse_secret(std::string_view v, std::string_view source) { return Secret(std::string(v), std::string(source)); }

std::string parse_text(std::string_view v, std::string_view) { return std::string(v); }

std::string parse_syvain_url(std::string_view v, std::string_view source) {
  if (!http_url(v)) bad(source, "an http:// or https:// URL", v, "e.g. https://metrics.041.io/api/v1");
  std::string url(v);
  while (url.ends_with('/')) url.pop_back();
  return url;
}

}  // namespace env_values

using namespace env_values;

Device parse_device(std::string_view value, std::string_view source) {
  static const std::vector<std::pair<std::string, Device>> devices = {
#define USER_DEVICE(name, help) {#name, Device::name},
#include "util/devices.def"
#undef USER_DEVICE
  };
  std::vector<std::string> names;
  std::string expected, help;
  for (const auto& [name, d] : devices) {
    expected += (names.empty() ? "" : " or ") + name;
    names.push_back(name);
  }
#define USER_DEVICE(name, text) help += std::string(help.empty() ? "" : "; ") + text;
#include "util/devices.def"
#undef USER_DEVICE
  std::string chosen = one_of(value, source, names, expected, help);
  for (const auto& [name, d] : devices)
    if (name == chosen) return d;
  return Device::cpu;  // one_of refused anything else
}

MetricsTarget parse_metrics(std::string_view value, std::string_view source) {
  constexpr std::string_view expected = "jsonl:<path>, stdout, syvain, syvain:<folder-id> or tensorboard:<dir>";
  MetricsTarget t;
  t.text = std::string(value);
  size_t colon = value.find(':');
  std::string_view head = value.substr(0, colon), rest = colon == value.npos ? "" : value.substr(colon + 1);
  if (value == "stdout") return t;
  if (head == "jsonl") {
    if (rest.empty())
      bad(source, expected, value, fmt::format("name the file, e.g. {}", setting(source, "jsonl:my-run.jsonl")));
    t.kind = MetricsTarget::Kind::jsonl;
    t.path = std::string(rest);
    return t;
  }
  if (head == "tensorboard") {
    if (rest.empty())
      bad(source, expected, value, fmt::format("name the folder, e.g. {}", setting(source, "tensorboard:runs")));
    t.kind = MetricsTarget::Kind::tensorboard;
    t.path = std::string(rest);
    return t;
  }
  if (head == "syvain" && (colon == value.npos || !rest.empty())) {
    t.kind = MetricsTarget::Kind::syvain;
    t.folder_id = std::string(rest);
    return t;
  }
  std::string help;
  std::string near = nearest(head, {"jsonl", "stdout", "syvain", "tensorboard"});
  if (value.ends_with(".jsonl") || value.find('/') != value.npos)
    help = fmt::format("for a file, write {}", setting(source, "jsonl:" + std::string(value)));
  else if (!near.empty())
    help = fmt::format("did you mean `{}`?", near + (colon == value.npos ? "" : ":" + std::string(rest)));
  bad(source, expected, value, help);
}

std::string parse_status(std::string_view value, std::string_view source) {
  if (value.empty() || value.ends_with('/')) bad(source, "a file path", value, "name a file, e.g. my-run.status.json");
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

}  // namespace sx
