#include "util/environment.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <ostream>

#include "util/environment_values.h"
#include "util/printable.h"

namespace sx {

using namespace env_values;

void PrintTo(const Secret& s, std::ostream* os) {
  *os << (s.set() ? "<secret from " + s.variable() + ">" : std::string("<unset secret>"));
}

std::string_view to_string(Device d) {
  switch (d) {
#define USER_DEVICE(name, help) \
  case Device::name:            \
    return #name;
#include "util/devices.def"
#undef USER_DEVICE
  }
  return "?";
}
std::string_view to_string(GradientPrecision p) { return p == GradientPrecision::f32 ? "f32" : "bf16"; }
std::string_view to_string(CpuBf16 c) { return c == CpuBf16::exact ? "exact" : "amx"; }

std::string Environment::syvain_folder() const {
  if (metrics && !metrics->folder_id.empty()) return metrics->folder_id;
  return syvain_folder_id.value_or("");
}

const std::vector<Setting>& settings() {
  static const std::vector<Setting> rows = {
#define SETTING(field, type, initial, variable, parser, values, dflt, meaning, flag_kind, flag, flag_value, flag_help) \
  {#variable,                                                                                                          \
   values,                                                                                                             \
   dflt,                                                                                                               \
   meaning,                                                                                                            \
   FlagKind::flag_kind,                                                                                                \
   flag,                                                                                                               \
   flag_value,                                                                                                         \
   flag_help,                                                                                                          \
   [](Environment& env, std::string_view value, std::string_view source) {                                             \
     env.field = parser(value, source);                                                                                \
     env.field##_source = std::string(source);                                                                         \
   }},
#include "util/settings.def"
#undef SETTING
  };
  return rows;
}

const Setting* setting_of_flag(std::string_view flag) {
  for (const auto& s : settings())
    if (!flag.empty() && s.flag == flag) return &s;
  return nullptr;
}

std::string flag_help(const Setting& s) {
  if (s.flag_kind == FlagKind::selection) return fmt::format("{}, over {}", s.flag_help, s.variable);
  return fmt::format("{}: {}", s.variable, s.flag_help);
}

bool apply_flag(Environment& env, std::string_view flag, std::string_view value) {
  const Setting* s = setting_of_flag(flag);
  if (!s) return false;
  s->apply(env, value, flag);
  return true;
}

// A variable set for a run it cannot change is refused, not ignored: the
// researcher meant something by it (two "nodes" that never meet, GPUs named
// for a CPU run) and would otherwise train without a word of it.
static void check_applies(const Environment& env, std::vector<Diagnostic>& diags) {
  auto refuse = [&](std::string message, std::string help) {
    diags.push_back(Diagnostic{Code::ENV_003, std::move(message), Span{}, {}, std::move(help)});
  };
  if (env.device != Device::cuda) {
    std::string device = env.device_source.empty() ? fmt::format("the default device, {}", to_string(env.device))
                                                   : setting(env.device_source, to_string(env.device));
    if (!env.devices_source.empty())
      refuse(fmt::format("SEXPGPU_DEVICES={} names CUDA devices, but this run trains on {}",
                         fmt::join(env.devices, ","), device),
             "run with --device cuda to train on those GPUs, or unset SEXPGPU_DEVICES");
    if (!env.cuda_emulate_source.empty() && env.cuda_emulate > 0)
      refuse(fmt::format("SEXPGPU_CUDA_EMULATE={} emulates CUDA devices, but this run trains on {}", env.cuda_emulate,
                         device),
             "run with --device cuda to train on the emulated device, or unset SEXPGPU_CUDA_EMULATE");
    if (!env.explain_kernels_source.empty() && env.explain_kernels)
      refuse(fmt::format("SEXPGPU_EXPLAIN=kernels lists the CUDA launches in the lowering report, but this run trains "
                         "on {}, which has none",
                         device),
             "run with --device cuda, see the launches of any experiment with `sexpgpu explain` (SEXPGPU_EXPLAIN "
             "applies there on every machine), or unset SEXPGPU_EXPLAIN");
  } else if (!env.cpu_bf16_source.empty() && env.cpu_bf16 == CpuBf16::amx) {
    refuse("SEXPGPU_CPU_BF16=amx runs the CPU's bf16 products on AMX's tiles, but this run trains on " +
               setting(env.device_source, to_string(env.device)),
           "unset SEXPGPU_CPU_BF16 (a CUDA device's bf16 products are its own), or run with --device cpu");
  }
  if (env.nodes == 1) {
    std::string nodes = env.nodes_source.empty() ? "SEXPGPU_NODES is not set" : "SEXPGPU_NODES is 1";
    auto alone = [&](std::string_view variable, std::string value, std::string_view what) {
      refuse(fmt::format("{}={} {}, but {}: this run is one node", variable, value, what, nodes),
             fmt::format("set SEXPGPU_NODES to how many nodes the run spans (the same on every node), or unset {}",
                         variable));
    };
    if (!env.rendezvous_source.empty() && env.rendezvous)
      alone("SEXPGPU_RENDEZVOUS",
            env.rendezvous->host.find(':') == std::string::npos
                ? fmt::format("{}:{}", env.rendezvous->host, env.rendezvous->port)
                : fmt::format("[{}]:{}", env.rendezvous->host, env.rendezvous->port),
            "is where the nodes meet");
    if (!env.node_gradients_source.empty())
      alone("SEXPGPU_NODE_GRADIENTS", std::string(to_string(env.node_gradients)),
            "sets the gradients that cross nodes");
    if (!env.node_address_source.empty() && env.node_address)
      alone("SEXPGPU_NODE_ADDRESS", *env.node_address, "is the address other nodes reach this one at");
  }
}

void check_requirements(const Environment& env) {
  std::vector<Diagnostic> diags;
  auto missing = [&](std::string message, std::string help) {
    diags.push_back(Diagnostic{Code::ENV_002, std::move(message), Span{}, {}, std::move(help)});
  };
  if (env.metrics && env.metrics->kind == MetricsTarget::Kind::syvain) {
    std::string target = setting(env.metrics_source, env.metrics->text);
    if (!env.syvain_api_key.set())
      missing(fmt::format("the syvain metrics target ({}) needs SYVAIN_METRICS_API_KEY, which is not set", target),
              "set SYVAIN_METRICS_API_KEY to your Metrics by 041 key");
    if (env.syvain_folder().empty())
      missing(fmt::format("the syvain metrics target ({}) needs a folder, and none is given", target),
              "write syvain:<folder-id>, or set SYVAIN_METRICS_FOLDER_ID");
  }
  // Checkpoints are written to and resumed from with the checkpoint role; report it once.
  std::string needed_by;
  if (env.checkpoint_dir && env.checkpoint_dir->s3)
    needed_by = fmt::format("the checkpoint location {}", setting(env.checkpoint_dir_source, env.checkpoint_dir->text));
  else if (env.resume && !env.resume->latest && env.resume->location.s3)
    needed_by = fmt::format("the checkpoint to resume {}", setting(env.resume_source, env.resume->location.text));
  if (!needed_by.empty()) collect(diags, [&] { require_s3(env.s3_checkpoint, needed_by); });
  if (env.resume && env.resume->latest && !env.checkpoint_dir)
    missing(fmt::format("{} needs a checkpoint location to look in", setting(env.resume_source, "latest")),
            "set SEXPGPU_CHECKPOINT_DIR or --checkpoint-dir to where this run's checkpoints are");
  check_applies(env, diags);
  if (!diags.empty()) throw UserError(std::move(diags));
}

Environment parse_environment(const Getenv& getenv) {
  Environment env;
  env.threads = all_cores();
  std::vector<Diagnostic> errors;
  std::vector<std::string_view> refused;
  for (const auto& s : settings()) {
    std::string name(s.variable);
    const char* v = getenv(name.c_str());
    if (!v || !*v) continue;
    size_t before = errors.size();
    collect(errors, [&] { s.apply(env, v, s.variable); });
    if (errors.size() > before) refused.push_back(s.variable);
  }
  auto was_refused = [&](std::string_view name) {
    return std::find(refused.begin(), refused.end(), name) != refused.end();
  };
  // What one variable cannot say alone (a bad value was reported above).
  bool nodes_set = !env.nodes_source.empty();
  if (!env.node_rank_source.empty() && !was_refused("SEXPGPU_NODES") && env.node_rank >= env.nodes)
    collect(errors, [&] {
      bad("SEXPGPU_NODE_RANK", fmt::format("a node rank below SEXPGPU_NODES ({})", env.nodes),
          getenv("SEXPGPU_NODE_RANK"),
          nodes_set ? fmt::format("ranks run from 0 to {}", env.nodes - 1)
                    : "set SEXPGPU_NODES on every node to how many nodes there are");
    });
  if (env.nodes > 1 && env.rendezvous_source.empty() && !was_refused("SEXPGPU_RENDEZVOUS"))
    errors.push_back(Diagnostic{Code::ENV_002,
                                fmt::format("SEXPGPU_NODES is {} but SEXPGPU_RENDEZVOUS is not set", env.nodes),
                                Span{},
                                {},
                                "set SEXPGPU_RENDEZVOUS=host:port, where node 0 listens, the same on every node"});

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
    std::vector<std::string> v;
    for (const auto& s : settings()) v.emplace_back(s.variable);
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
