#pragma once
// Every environment variable sexpgpu reads, parsed and validated in one place,
// once, at run start (seeds/environment.md). Nothing else calls getenv for a
// SEXPGPU_*, SYVAIN_* or AWS_* name. docs/environment.md is the user's page.
//
// Flow for a command: parse_environment() (all bad variables in one error),
// then apply_flag() for each of the flags that alias a variable (the flag
// wins), then check_requirements() for what needs several settings together.
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sx {

// A credential. It has no operator<< and no fmt formatter so it cannot reach a
// log, a message or a status file by accident; reveal() is for the code that
// signs a request.
class Secret {
 public:
  Secret() = default;
  Secret(std::string value, std::string variable) : value_(std::move(value)), variable_(std::move(variable)) {}
  bool set() const { return !value_.empty(); }
  const std::string& reveal() const { return value_; }
  const std::string& variable() const { return variable_; }  // where it came from; "" when unset

 private:
  std::string value_, variable_;
};
// For GoogleTest, which would otherwise dump the object's bytes on a failed assertion.
void PrintTo(const Secret& s, std::ostream* os);

// A value that is not secret, with the variable it came from ("" when unset).
struct Resolved {
  std::string value, variable;
  bool set() const { return !value.empty(); }
};

// S3 credentials of one role. Each value resolves on its own, first match wins:
// SEXPGPU_<ROLE>_AWS_<name> > SEXPGPU_AWS_<name> > AWS_<name>.
enum class S3Role { data, checkpoint };
struct S3Credentials {
  S3Role role = S3Role::data;
  Secret access_key_id, secret_access_key, session_token;  // session_token is optional
  Resolved endpoint_url, region;

  // One entry per required value that is not set, naming the variables that
  // would set it: "SEXPGPU_CHECKPOINT_AWS_REGION, SEXPGPU_AWS_REGION or AWS_REGION".
  std::vector<std::string> missing() const;
  bool complete() const { return missing().empty(); }
  // "checkpoint: access key from AWS_ACCESS_KEY_ID, ..., region us-east-1 from AWS_REGION"; no secret.
  std::string redacted() const;
};
std::string_view to_string(S3Role r);  // "data", "checkpoint"
// The variables for value `name` (ACCESS_KEY_ID, ...) of a role, highest precedence first.
std::vector<std::string> s3_variables(S3Role role, std::string_view name);

enum class Device {
#define USER_DEVICE(name, help) name,
#include "util/devices.def"
#undef USER_DEVICE
};
enum class GradientPrecision { f32, bf16 };
// How the CPU runs bf16 products (SEXPGPU_CPU_BF16): the definition, the
// same bits on every x86-64 CPU, or on AMX's tiles, this CPU's own bits.
enum class CpuBf16 { exact, amx };
std::string_view to_string(Device d);
std::string_view to_string(GradientPrecision p);
std::string_view to_string(CpuBf16 c);

struct MetricsTarget {
  enum class Kind { jsonl, standard_output, syvain, tensorboard };  // not `stdout`: that is a macro
  Kind kind = Kind::standard_output;
  std::string path;       // jsonl: the file; tensorboard: the folder; as given
  std::string folder_id;  // syvain:<folder-id>; "" for plain syvain
  std::string text;       // the target as given
};

// A checkpoint location or a checkpoint: a local directory or s3://bucket/prefix.
struct Location {
  std::string text;  // as given, less a trailing '/'
  bool s3 = false;
  std::string bucket;  // s3 only
  std::string prefix;  // s3 only: the key prefix, no leading or trailing '/'; may be empty
};

struct ResumeFrom {
  bool latest = false;          // the newest complete checkpoint under the checkpoint location
  Location location;            // unless latest
  std::optional<int64_t> step;  // n of a final step-<n> component, when there is one
};

struct Rendezvous {
  std::string host;  // without the brackets of an IPv6 address
  int port = 0;
};

struct Environment {
  // One field per row of settings.def, and where its value came from, so a
  // later error names what the user set: "SEXPGPU_DEVICE", "--device", or ""
  // (the default).
#define SETTING(field, type, initial, ...) \
  type field = initial;                    \
  std::string field##_source;
#include "util/settings.def"
#undef SETTING

  S3Credentials s3_data{S3Role::data, {}, {}, {}, {}, {}};
  S3Credentials s3_checkpoint{S3Role::checkpoint, {}, {}, {}, {}, {}};

  // The syvain folder: syvain:<id> wins over SYVAIN_METRICS_FOLDER_ID; "" when neither.
  std::string syvain_folder() const;
};

// A row of settings.def, for the code that lists the settings: the flags'
// help, the known names, the docs table.
enum class FlagKind { none, alias, selection };
struct Setting {
  std::string_view variable;
  std::string_view values, dflt, meaning;  // the docs table's columns
  FlagKind flag_kind;
  std::string_view flag, flag_value, flag_help;
  // Parses `value` into its field and records `source` (the variable or the flag) as the field's source.
  void (*apply)(Environment& env, std::string_view value, std::string_view source);
};
const std::vector<Setting>& settings();
// The row of `flag` ("--device"); nullptr when no setting has that flag.
const Setting* setting_of_flag(std::string_view flag);
// The flag's help line: "SEXPGPU_DEVICE: where to train (default cpu)" for an
// alias, "comma-separated globs ..., over SEXPGPU_DIAGNOSTICS" for a selection flag.
std::string flag_help(const Setting& s);

using Getenv = std::function<const char*(const char*)>;

// Reads and validates every variable; a variable set to "" counts as unset.
// Throws one UserError with a Diagnostic per bad variable (E-ENV-001, or
// E-ENV-002 for SEXPGPU_RENDEZVOUS missing with several nodes).
Environment parse_environment(const Getenv& getenv = ::getenv);

// The parsers of the settings that are both a flag and a variable, shared by
// both so they validate alike. `source` names the variable or the flag in the
// message; the code is E-CLI-002 when it is a flag ("--..."), else E-ENV-001.
Device parse_device(std::string_view value, std::string_view source);
MetricsTarget parse_metrics(std::string_view value, std::string_view source);
std::string parse_status(std::string_view value, std::string_view source);
Location parse_checkpoint_dir(std::string_view value, std::string_view source);
ResumeFrom parse_resume(std::string_view value, std::string_view source);
std::vector<std::string> parse_diagnostics(std::string_view value, std::string_view source);

// Sets the setting of `flag` (--device, --metrics, --status, --checkpoint-dir,
// --resume, --diagnostics) from its value, over whatever the variable said.
// Returns false, changing nothing, when `flag` is none of these.
bool apply_flag(Environment& env, std::string_view flag, std::string_view value);

// What needs several settings together, checked after the flags are applied
// and before compilation: the syvain key and folder, the checkpoint role's S3
// credentials for an s3:// checkpoint location or resume, a location for
// `latest`. Throws one UserError (E-ENV-002, E-ENV-001) listing every problem.
void check_requirements(const Environment& env);

// Throws E-ENV-002 naming the variables to set when the role lacks a required
// value, E-ENV-001 when its endpoint is not an http(s) URL. `needed_by` says
// what needs it: "the checkpoint location s3://b/p (SEXPGPU_CHECKPOINT_DIR)".
void require_s3(const S3Credentials& creds, std::string_view needed_by);

// Every variable name sexpgpu reads (settings.def and the S3 family), and a warning for each SEXPGPU_* or
// SYVAIN_* name in `names` that is none of them (a typo is otherwise silently ignored).
const std::vector<std::string>& known_variables();
std::vector<std::string> unknown_variables(const std::vector<std::string>& names);

}  // namespace sx
