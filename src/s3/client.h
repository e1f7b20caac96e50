#pragma once
// A small S3 client on libcurl (no SDK): path-style requests
// `<endpoint>/<bucket>/<key>` signed with SigV4 by libcurl (CURLOPT_AWS_SIGV4),
// following the rules in notes/dependencies.md: x-amz-content-sha256 always
// set, query parameters sorted, keys percent-encoded, no blank Expect header.
//
// Every call retries connection errors, timeouts, 5xx and throttling (429, 503
// SlowDown) with exponential backoff and full jitter; other 4xx fail at once.
// Errors are UserErrors with an E-S3-* code naming the role, the method, the
// bucket and key, and the HTTP status or curl error; never a secret.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/environment.h"

namespace sx::net {
struct HttpRequest;
// RFC 3986 percent-encoding; '/' is kept when keep_slash (net/http.cpp).
std::string percent_encode(std::string_view s, bool keep_slash);
}  // namespace sx::net

namespace sx::s3 {

struct Config {
  std::string endpoint;  // "https://s3.us-east-1.amazonaws.com", no trailing '/'
  std::string region;
  Secret access_key_id, secret_access_key, session_token;
  std::string role = "data";  // how messages name the credentials' role

  long connect_timeout_ms = 10'000;
  long stall_timeout_s = 30;    // a transfer that moves no byte for this long fails (and is retried)
  long request_timeout_ms = 0;  // the whole request; 0: none (large objects take long)
  int max_attempts = 6;         // tries of one request, the first included
  long backoff_base_ms = 100;   // before retry i (1-based): uniform in [0, min(max, base * 2^i)]
  long backoff_max_ms = 10'000;
  uint64_t multipart_threshold = 64ull << 20;  // a put above this is a multipart upload
  uint64_t part_size = 16ull << 20;            // grown when an object would need more than 10000 parts
  int list_page_size = 1000;                   // max-keys of one LIST page
  const std::atomic<bool>* cancel = nullptr;   // when set and true, a request in flight is abandoned
};

// The config of a role's resolved credentials; require_s3 should have passed.
Config config_from(const S3Credentials& creds);

struct Object {
  std::string key;
  uint64_t size = 0;
  std::string etag;
};

struct Listing {
  std::vector<Object> objects;        // in key order
  std::vector<std::string> prefixes;  // common prefixes, with a delimiter
};

class Client {
 public:
  explicit Client(Config config);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const Config& config() const { return config_; }

  // The object's size and etag, or nullopt when it does not exist.
  std::optional<Object> head(const std::string& bucket, const std::string& key);
  // The whole object; nullopt when it does not exist.
  std::optional<std::string> get(const std::string& bucket, const std::string& key);
  // Bytes [offset, offset + n) of the object; E-S3-006 when it has fewer.
  std::string get_range(const std::string& bucket, const std::string& key, uint64_t offset, uint64_t n);
  // The whole object and its etag; nullopt when it does not exist.
  std::optional<std::pair<std::string, std::string>> get_with_etag(const std::string& bucket, const std::string& key);
  // Writes the object (multipart above config.multipart_threshold).
  void put(const std::string& bucket, const std::string& key, std::string_view bytes);
  // A conditional PUT of a small object: only when no object is at `key`
  // (if_etag empty: If-None-Match: *) or when the object there has the etag
  // `if_etag` (If-Match). The new object's etag, or nullopt when the
  // condition did not hold (HTTP 412; 404 for If-Match on a missing object).
  // A 409 (a conditional write that raced another) is retried. A retried request whose first try was applied also
  // answers 412: the caller tells that apart by reading the object back.
  std::optional<std::string> put_if(const std::string& bucket, const std::string& key, std::string_view bytes,
                                    const std::string& if_etag);
  // Server-side copy within the endpoint (objects up to 5 GiB).
  void copy(const std::string& bucket, const std::string& from_key, const std::string& to_key);
  // Deletes the object; nothing when it does not exist.
  void remove(const std::string& bucket, const std::string& key);
  // Every object under `prefix` (all pages). With a delimiter, keys past the
  // next delimiter are rolled up into `prefixes`.
  Listing list(const std::string& bucket, const std::string& prefix, const std::string& delimiter = {});

  struct Request;  // defined in client.cpp
  struct Response;

 private:
  Response perform(const Request& req);
  net::HttpRequest http_request(const Request& req) const;
  void put_multipart(const std::string& bucket, const std::string& key, std::string_view bytes);

  Config config_;
  struct Pool;
  std::unique_ptr<Pool> pool_;
};

// One client per role, made from the credentials given to set_credentials
// (the runtime calls it once, at run start), with `cancel` as its
// Config::cancel. E-ENV-002 naming the variables when the role's credentials
// are incomplete; `needed_by` says what needed them.
void set_credentials(const S3Credentials& creds, const std::atomic<bool>* cancel = nullptr);
std::shared_ptr<Client> client_for(S3Role role, std::string_view needed_by);
// Tests: the client a role uses from now on (nullptr: made from the credentials again).
void set_client(S3Role role, std::shared_ptr<Client> client);

// An s3:// address split: "s3://b/a/k" is {"b", "a/k"}. E-S3-007 when there is no bucket.
struct Address {
  std::string bucket, key;
};
Address parse_address(std::string_view uri);
bool is_s3(std::string_view uri);

using net::percent_encode;

}  // namespace sx::s3
