// The S3 credentials of the two roles: their variables and what a role needs.
#include <fmt/format.h>

#include "util/environment_values.h"
#include "util/printable.h"

namespace sx {

using namespace env_values;

namespace {
constexpr const char* kS3Required[] = {"ACCESS_KEY_ID", "SECRET_ACCESS_KEY", "ENDPOINT_URL", "REGION"};
}  // namespace

std::string_view to_string(S3Role r) { return r == S3Role::data ? "data" : "checkpoint"; }

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
  return fmt::format("{}: access key {}, secret key {}, session token {}, endpoint {}, region {}", to_string(role),
                     from(access_key_id.variable()), from(secret_access_key.variable()), from(session_token.variable()),
                     plain(endpoint_url), plain(region));
}

void require_s3(const S3Credentials& creds, std::string_view needed_by) {
  std::vector<Diagnostic> diags;
  std::vector<std::string> names;
  Diagnostic d{Code::ENV_002, "", Span{}, {}, {}};
  bool set[] = {creds.access_key_id.set(), creds.secret_access_key.set(), creds.endpoint_url.set(), creds.region.set()};
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

}  // namespace sx
