#pragma once
// The syvain metrics target (metrics-service.md): the pre-flight before
// compilation, and the target that spools each record, queues it, and has a
// background thread send it in NDJSON batches, so that a step never waits on
// the network and a run never fails because of the service.
#include <memory>
#include <optional>
#include <string>

#include "runtime/metrics_targets.h"
#include "util/environment.h"
#include "util/error.h"

namespace sx::report {

// Before compilation, for a syvain target: GET <base>/folders/<folder>, 5 s.
// 401, 403, 404: E-METRICS-020, -021, -022 naming the folder (never the key);
// unreachable or 5xx: one warning line, and the run goes on, spooling. Keeps
// the URL, folder and key for open_syvain_target. E-METRICS-002 when libcurl
// cannot be loaded.
void syvain_preflight(const Environment& env);

// What the pre-flight found, without acting on it (for `sexpgpu doctor`):
// a refusal (E-METRICS-020/021/022; its message names the folder, never the
// key), or why the service could not be reached, or neither (it answered 200).
struct SyvainProbe {
  std::string folder;
  std::optional<UserError> refused;
  std::string unreachable;
};
SyvainProbe probe_syvain(const Environment& env);

// The target syvain_preflight prepared (it must have run).
std::unique_ptr<MetricsTarget> open_syvain_target();

}  // namespace sx::report
