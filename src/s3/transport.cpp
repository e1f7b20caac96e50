// Performing one request: an easy handle from the pool (so connections are
// reused), everything set afresh, SigV4 by libcurl, and the retries with
// exponential backoff and full jitter (client.h says which answers are retried).
#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "s3/request.h"
#include "util/printable.h"
#include "util/sha256.h"

namespace sx::s3 {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct Transfer {
  Client::Response* resp;
  std::string_view upload;
  size_t sent = 0;
  const std::atomic<bool>* cancel;
  bool headers_ended = false;  // the blank line after the last header was seen
};

size_t on_write(char* p, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  t->resp->body.append(p, size * n);
  return size * n;
}

size_t on_read(char* p, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t k = std::min(size * n, t->upload.size() - t->sent);
  std::copy_n(t->upload.data() + t->sent, k, p);
  t->sent += k;
  return k;
}

size_t on_header(char* p, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(p, size * n);
  if (line.starts_with("HTTP/")) {  // a 100 Continue, or a redirect, before
    t->resp->headers.clear();
    t->headers_ended = false;
  }
  if (line == "\r\n" || line == "\n") t->headers_ended = true;
  size_t colon = line.find(':');
  if (colon != std::string_view::npos)
    t->resp->headers[lower(std::string(line.substr(0, colon)))] = trim(line.substr(colon + 1));
  return size * n;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  return t->cancel && t->cancel->load() ? 1 : 0;
}

bool retryable(CURLcode c) {
  switch (c) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_WEIRD_SERVER_REPLY:
      return true;
    default:
      return false;
  }
}

bool retryable(long status) { return status >= 500 || status == 429; }

struct CurlFailure {
  CURLcode code;
  std::string message;
};

}  // namespace

Client::Response Client::perform_once(const Request& req, int attempt) {
  CURL* h = nullptr;
  {
    std::lock_guard lock(pool_->mu);
    if (!pool_->free.empty()) h = pool_->free.back(), pool_->free.pop_back();
  }
  if (h == nullptr) h = curl_api().easy_init();
  SX_ASSERT(h != nullptr, "curl_easy_init failed");
  curl_api().easy_reset(h);

  std::string url = config_.endpoint + "/" + percent_encode(req.bucket, false);
  if (!req.key.empty()) url += "/" + percent_encode(req.key, true);
  auto query = req.query;
  std::sort(query.begin(), query.end());
  for (size_t i = 0; i < query.size(); ++i)
    url += (i ? "&" : "?") + percent_encode(query[i].first, false) + "=" + percent_encode(query[i].second, false);

  curl_slist* headers = nullptr;
  auto add = [&](const std::string& h) { headers = curl_api().slist_append(headers, h.c_str()); };
  add("x-amz-content-sha256: " + sha256_hex(req.body));
  if (config_.session_token.set()) add("x-amz-security-token: " + config_.session_token.reveal());
  if (req.range) add(fmt::format("Range: bytes={}-{}", req.range->first, req.range->first + req.range->second - 1));
  for (const auto& x : req.headers) add(x);

  Response resp;
  Transfer t{&resp, req.body, 0, config_.cancel};
  char err[CURL_ERROR_SIZE] = {0};
  std::string sigv4 = "aws:amz:" + config_.region + ":s3";
  curl_api().easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_api().easy_setopt(h, CURLOPT_AWS_SIGV4, sigv4.c_str());
  curl_api().easy_setopt(h, CURLOPT_USERNAME, config_.access_key_id.reveal().c_str());
  curl_api().easy_setopt(h, CURLOPT_PASSWORD, config_.secret_access_key.reveal().c_str());
  curl_api().easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_api().easy_setopt(h, CURLOPT_ERRORBUFFER, err);
  curl_api().easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_api().easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, config_.connect_timeout_ms);
  curl_api().easy_setopt(h, CURLOPT_TIMEOUT_MS, config_.request_timeout_ms);
  curl_api().easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_api().easy_setopt(h, CURLOPT_LOW_SPEED_TIME, config_.stall_timeout_s);
  curl_api().easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
  curl_api().easy_setopt(h, CURLOPT_WRITEDATA, &t);
  curl_api().easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_api().easy_setopt(h, CURLOPT_HEADERDATA, &t);
  curl_api().easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_api().easy_setopt(h, CURLOPT_XFERINFODATA, &t);
  curl_api().easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  std::string_view method = req.method;
  if (method == "HEAD") {
    curl_api().easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else if (method == "PUT") {
    curl_api().easy_setopt(h, CURLOPT_UPLOAD, 1L);
    curl_api().easy_setopt(h, CURLOPT_READFUNCTION, on_read);
    curl_api().easy_setopt(h, CURLOPT_READDATA, &t);
    curl_api().easy_setopt(h, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  } else if (method == "POST") {
    curl_api().easy_setopt(h, CURLOPT_POST, 1L);
    curl_api().easy_setopt(h, CURLOPT_POSTFIELDS, req.body.data() ? req.body.data() : "");
    curl_api().easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  } else if (method != "GET") {
    curl_api().easy_setopt(h, CURLOPT_CUSTOMREQUEST, req.method);
  }
  if (req.range) resp.body.reserve(req.range->second);

  CURLcode rc = curl_api().easy_perform(h);
  curl_api().slist_free_all(headers);
  curl_api().easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp.status);
  {
    std::lock_guard lock(pool_->mu);
    if (pool_->free.size() < 8 && rc == CURLE_OK) {
      pool_->free.push_back(h);
      h = nullptr;
    }
  }
  if (h) curl_api().easy_cleanup(h);  // a broken connection is not reused
  resp.attempts = attempt;
  if (rc != CURLE_OK) throw CurlFailure{rc, err[0] ? std::string(err) : curl_api().easy_strerror(rc)};
  if (!t.headers_ended) throw CurlFailure{CURLE_PARTIAL_FILE, "the answer ended inside its headers"};
  if (req.needs_length && resp.status >= 200 && resp.status < 300 && !resp.headers.count("content-length"))
    throw CurlFailure{CURLE_PARTIAL_FILE, "the answer has no Content-Length (cut short in its headers)"};
  return resp;
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

std::string describe(const char* method, const std::string& bucket, const std::string& key) {
  return fmt::format("{} s3://{}/{}", method, bucket, key);
}

Client::Response Client::perform(const Request& req) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  auto where = [&] {
    return fmt::format("{} at {}", describe(req.method, req.bucket, req.key), without_userinfo(config_.endpoint));
  };
  int attempts = std::max(1, config_.max_attempts);
  for (int attempt = 1;; ++attempt) {
    if (config_.cancel && config_.cancel->load())
      throw UserError(Code::S3_001, {}, fmt::format("{} ({} role): cancelled", where(), config_.role));
    std::optional<CurlFailure> failure;
    Response resp;
    try {
      resp = perform_once(req, attempt);
      if (!retryable(resp.status)) return resp;
    } catch (const CurlFailure& f) {
      if (f.code == CURLE_ABORTED_BY_CALLBACK)
        throw UserError(Code::S3_001, {}, fmt::format("{} ({} role): cancelled", where(), config_.role));
      if (!retryable(f.code) || attempt >= attempts)
        throw UserError(
            Code::S3_001, {},
            fmt::format("cannot {} ({} role): {} (curl error {}), after {} {}", where(), config_.role,
                        without_userinfo(f.message), static_cast<int>(f.code), attempt, attempt == 1 ? "try" : "tries"),
            "check the role's ENDPOINT_URL and the network");
      failure = f;
    }
    if (!failure && attempt >= attempts) return resp;  // 5xx or 429 on every try: the caller's error
    long cap = config_.backoff_base_ms;
    for (int i = 0; i < attempt && cap < config_.backoff_max_ms; ++i) cap *= 2;
    cap = std::min(cap, config_.backoff_max_ms);
    std::uniform_int_distribution<long> pick(0, std::max(0L, cap));
    // In slices, so that a cancel is seen within 20 ms even in a 10 s backoff.
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(pick(rng));
    while (std::chrono::steady_clock::now() < until && !(config_.cancel && config_.cancel->load()))
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          std::chrono::milliseconds(20), until - std::chrono::steady_clock::now()));
  }
}

}  // namespace sx::s3
