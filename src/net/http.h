#pragma once
// HTTP on libcurl, shared by the S3 client and the syvain metrics target: one
// request performed on an easy handle from a pool (so connections are reused),
// cancellable within 20 ms, and the retries with exponential backoff, jitter
// and Retry-After. What a request means is the caller's business.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "net/curl_api.h"

namespace sx::net {

struct HttpRequest {
  const char* method = "GET";  // GET, HEAD, PUT, POST, or any other (sent as a custom request)
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string_view body;
  std::optional<std::pair<uint64_t, uint64_t>> range;  // offset, n > 0
  // A 2xx answer without Content-Length is taken for one cut in its headers
  // (HEAD: the length is the answer), a transfer error, and retried.
  bool needs_length = false;
  // SigV4 by libcurl ("aws:amz:<region>:s3") with these credentials, when set.
  std::string sigv4, username, password;
};

struct HttpResponse {
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names lowercase
  int attempts = 0;
};

struct Transport {
  long connect_timeout_ms = 10'000;
  long stall_timeout_s = 30;                  // a transfer that moves no byte for this long fails
  long request_timeout_ms = 0;                // the whole request; 0: none
  const std::atomic<bool>* cancel = nullptr;  // when set and true, a request in flight is abandoned
  bool cancelled() const { return cancel && cancel->load(); }
};

// A request that got no (whole) answer. CURLE_ABORTED_BY_CALLBACK: cancelled.
struct TransferFailure {
  CURLcode code;
  std::string message;
  int attempts = 1;
  bool cancelled() const { return code == CURLE_ABORTED_BY_CALLBACK; }
};

// Connection errors, timeouts and answers cut short: worth another try.
bool retryable(const TransferFailure& f);
// 5xx and 429.
bool retryable_status(long status);

// Easy handles kept for reuse (their connections stay open), at most 8.
class HandlePool {
 public:
  HandlePool() = default;
  ~HandlePool();
  HandlePool(const HandlePool&) = delete;
  HandlePool& operator=(const HandlePool&) = delete;
  CURL* take();
  // A handle whose transfer failed is closed, not reused (its connection may be broken).
  void give_back(CURL* h, bool reusable);

 private:
  std::mutex mu_;
  std::vector<CURL*> free_;
};

// One try; TransferFailure when no whole answer came.
HttpResponse perform_once(HandlePool& pool, const HttpRequest& req, const Transport& transport, int attempt = 1);

// The wait before retry `attempt` (1-based: after the first try failed).
struct Backoff {
  enum class Jitter {
    full,           // uniform in [0, min(max, base * 2^attempt)]
    twenty_percent  // min(max, base * 2^(attempt-1)), ±20%
  };
  long base_ms = 100;
  long max_ms = 10'000;
  Jitter jitter = Jitter::full;
  // At least the answer's Retry-After (seconds), when it has one, up to max_ms.
  std::chrono::milliseconds delay(int attempt, const HttpResponse* answer = nullptr) const;
};

// An answer's Retry-After in milliseconds (only the delay-seconds form).
std::optional<long> retry_after_ms(const HttpResponse& answer);
// curl's error text without the time a failed connect took ("Failed to
// connect to h port 9 after 2 ms: ..." -> "... port 9: ..."): it varies from
// one try to the next, and the message is the user's, compared in docs.
std::string without_elapsed_ms(std::string text);

// Sleeps `d` in 20 ms slices; false (early) when `cancel` becomes true.
bool sleep_unless_cancelled(std::chrono::milliseconds d, const std::atomic<bool>* cancel);

// Tries until an answer that is not retried (retryable_status), or
// `max_attempts` tries: then the last answer (a 5xx or 429: the caller's
// error). TransferFailure (with its attempts) when a failure is not retried,
// the tries ran out, or the transport was cancelled.
HttpResponse perform_with_retries(HandlePool& pool, const HttpRequest& req, const Transport& transport,
                                  const Backoff& backoff, int max_attempts);

// RFC 3986 percent-encoding; '/' is kept when keep_slash.
std::string percent_encode(std::string_view s, bool keep_slash);

// `s` without leading and trailing blanks.
std::string trim(std::string_view s);

}  // namespace sx::net
