#pragma once
// The parsers of settings.def's values and what they share (internal to the
// environment's files). A parser takes the value and its source, the variable
// or the flag that gave it, which its message names.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "util/environment.h"
#include "util/error.h"

namespace sx::env_values {

// A flag's bad value is a usage error (E-CLI-002); a variable's is E-ENV-001.
[[noreturn]] void bad(std::string_view source, std::string_view expected, std::string_view found,
                      std::string help = {});
// How the user would write the setting: "--resume latest" or "SEXPGPU_RESUME=latest".
std::string setting(std::string_view source, std::string_view value);
bool http_url(std::string_view v);
// "a, b and c" with `last_sep` " and ".
std::string join(const std::vector<std::string>& items, std::string_view last_sep);
// Every core this process may run on (a container or taskset may allow fewer than the machine has).
int all_cores();
// Runs f, adding the diagnostics of the UserError it throws to `out`.
void collect(std::vector<Diagnostic>& out, const std::function<void()>& f);

// The parsers of the rows without a flag (those with one are in environment.h).
std::vector<int> parse_devices(std::string_view value, std::string_view source);
int parse_nodes(std::string_view value, std::string_view source);
int parse_node_rank(std::string_view value, std::string_view source);  // below SEXPGPU_NODES: parse_environment
Rendezvous parse_rendezvous(std::string_view value, std::string_view source);
GradientPrecision parse_node_gradients(std::string_view value, std::string_view source);
CpuBf16 parse_cpu_bf16(std::string_view value, std::string_view source);
double parse_node_timeout(std::string_view value, std::string_view source);
std::string parse_node_address(std::string_view value, std::string_view source);
std::string parse_run_slug(std::string_view value, std::string_view source);
int64_t parse_eval_limit(std::string_view value, std::string_view source);
int parse_threads(std::string_view value, std::string_view source);
double parse_memory(std::string_view value, std::string_view source);
bool parse_explain(std::string_view value, std::string_view source);
int parse_cuda_emulate(std::string_view value, std::string_view source);
Secret parse_secret(std::string_view value, std::string_view source);
std::string parse_text(std::string_view value, std::string_view source);
std::string parse_syvain_url(std::string_view value, std::string_view source);

}  // namespace sx::env_values
