// Performing one S3 request on the shared HTTP plumbing (net/http.h): the
// URL with its sorted query, SigV4 by libcurl, and the retries with
// exponential backoff and full jitter (client.h says which answers are retried).
#include <algorithm>

#include "s3/request.h"
#include "util/printable.h"
#include "util/sha256.h"

namespace sx::s3 {

namespace {

net::Transport transport_of(const Config& c) {
  net::Transport t;
  t.connect_timeout_ms = c.connect_timeout_ms;
  t.stall_timeout_s = c.stall_timeout_s;
  t.request_timeout_ms = c.request_timeout_ms;
  t.cancel = c.cancel;
  return t;
}

}  // namespace

net::HttpRequest Client::http_request(const Request& req) const {
  net::HttpRequest h;
  h.method = req.method;
  h.url = config_.endpoint + "/" + percent_encode(req.bucket, false);
  if (!req.key.empty()) h.url += "/" + percent_encode(req.key, true);
  auto query = req.query;
  std::sort(query.begin(), query.end());
  for (size_t i = 0; i < query.size(); ++i)
    h.url += (i ? "&" : "?") + percent_encode(query[i].first, false) + "=" + percent_encode(query[i].second, false);
  h.headers.push_back("x-amz-content-sha256: " + sha256_hex(req.body));
  if (config_.session_token.set()) h.headers.push_back("x-amz-security-token: " + config_.session_token.reveal());
  for (const auto& x : req.headers) h.headers.push_back(x);
  h.body = req.body;
  h.range = req.range;
  h.needs_length = req.needs_length;
  h.sigv4 = "aws:amz:" + config_.region + ":s3";
  h.username = config_.access_key_id.reveal();
  h.password = config_.secret_access_key.reveal();
  return h;
}

std::string describe(const char* method, const std::string& bucket, const std::string& key) {
  return fmt::format("{} s3://{}/{}", method, bucket, key);
}

Client::Response Client::perform(const Request& req) {
  auto where = [&] {
    return fmt::format("{} at {}", describe(req.method, req.bucket, req.key), without_userinfo(config_.endpoint));
  };
  net::Backoff backoff{config_.backoff_base_ms, config_.backoff_max_ms, net::Backoff::Jitter::full};
  try {
    return net::perform_with_retries(*pool_, http_request(req), transport_of(config_), backoff, config_.max_attempts);
  } catch (const net::TransferFailure& f) {
    if (f.cancelled()) throw UserError(Code::S3_001, {}, fmt::format("{} ({} role): cancelled", where(), config_.role));
    throw UserError(Code::S3_001, {},
                    fmt::format("cannot {} ({} role): {} (curl error {}), after {} {}", where(), config_.role,
                                without_userinfo(f.message), static_cast<int>(f.code), f.attempts,
                                f.attempts == 1 ? "try" : "tries"),
                    "check the role's ENDPOINT_URL and the network");
  }
}

}  // namespace sx::s3
