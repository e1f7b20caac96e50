// Performing one request: an easy handle from the pool, everything set
// afresh, and the retry loop around it.
#include "net/http.h"

#include <algorithm>
#include <thread>

namespace sx::net {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct Transfer {
  HttpResponse* resp;
  std::string_view upload;
  size_t sent = 0;
  const Transport* transport;
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
  return t->transport->cancelled() ? 1 : 0;
}

}  // namespace

bool retryable(const TransferFailure& f) {
  switch (f.code) {
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

bool retryable_status(long status) { return status >= 500 || status == 429; }

HandlePool::~HandlePool() {
  for (CURL* c : free_) curl_api().easy_cleanup(c);
}

CURL* HandlePool::take() {
  CURL* h = nullptr;
  {
    std::lock_guard lock(mu_);
    if (!free_.empty()) h = free_.back(), free_.pop_back();
  }
  if (h == nullptr) h = curl_api().easy_init();
  SX_ASSERT(h != nullptr, "curl_easy_init failed");
  curl_api().easy_reset(h);
  return h;
}

void HandlePool::give_back(CURL* h, bool reusable) {
  {
    std::lock_guard lock(mu_);
    if (reusable && free_.size() < 8) {
      free_.push_back(h);
      return;
    }
  }
  curl_api().easy_cleanup(h);
}

HttpResponse perform_once(HandlePool& pool, const HttpRequest& req, const Transport& transport, int attempt) {
  const CurlApi& api = curl_api();
  CURL* h = pool.take();
  curl_slist* headers = nullptr;
  auto add = [&](const std::string& x) { headers = api.slist_append(headers, x.c_str()); };
  if (req.range) add(fmt::format("Range: bytes={}-{}", req.range->first, req.range->first + req.range->second - 1));
  for (const auto& x : req.headers) add(x);

  HttpResponse resp;
  Transfer t{&resp, req.body, 0, &transport};
  char err[CURL_ERROR_SIZE] = {0};
  api.easy_setopt(h, CURLOPT_URL, req.url.c_str());
  if (!req.sigv4.empty()) {
    api.easy_setopt(h, CURLOPT_AWS_SIGV4, req.sigv4.c_str());
    api.easy_setopt(h, CURLOPT_USERNAME, req.username.c_str());
    api.easy_setopt(h, CURLOPT_PASSWORD, req.password.c_str());
  }
  api.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  api.easy_setopt(h, CURLOPT_ERRORBUFFER, err);
  api.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  api.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, transport.connect_timeout_ms);
  api.easy_setopt(h, CURLOPT_TIMEOUT_MS, transport.request_timeout_ms);
  api.easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
  api.easy_setopt(h, CURLOPT_LOW_SPEED_TIME, transport.stall_timeout_s);
  api.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
  api.easy_setopt(h, CURLOPT_WRITEDATA, &t);
  api.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  api.easy_setopt(h, CURLOPT_HEADERDATA, &t);
  api.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  api.easy_setopt(h, CURLOPT_XFERINFODATA, &t);
  api.easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  std::string_view method = req.method;
  if (method == "HEAD") {
    api.easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else if (method == "PUT") {
    api.easy_setopt(h, CURLOPT_UPLOAD, 1L);
    api.easy_setopt(h, CURLOPT_READFUNCTION, on_read);
    api.easy_setopt(h, CURLOPT_READDATA, &t);
    api.easy_setopt(h, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  } else if (method == "POST") {
    api.easy_setopt(h, CURLOPT_POST, 1L);
    api.easy_setopt(h, CURLOPT_POSTFIELDS, req.body.data() ? req.body.data() : "");
    api.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  } else if (method != "GET") {
    api.easy_setopt(h, CURLOPT_CUSTOMREQUEST, req.method);
  }
  if (req.range) resp.body.reserve(req.range->second);

  CURLcode rc = api.easy_perform(h);
  api.slist_free_all(headers);
  api.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp.status);
  pool.give_back(h, rc == CURLE_OK);
  resp.attempts = attempt;
  if (rc != CURLE_OK)
    throw TransferFailure{rc, without_elapsed_ms(err[0] ? std::string(err) : api.easy_strerror(rc)), attempt};
  if (!t.headers_ended) throw TransferFailure{CURLE_PARTIAL_FILE, "the answer ended inside its headers", attempt};
  if (req.needs_length && resp.status >= 200 && resp.status < 300 && !resp.headers.count("content-length"))
    throw TransferFailure{CURLE_PARTIAL_FILE, "the answer has no Content-Length (cut short in its headers)", attempt};
  return resp;
}

std::string without_elapsed_ms(std::string text) {
  for (size_t at = text.find(" after "); at != std::string::npos; at = text.find(" after ", at + 1)) {
    size_t digits = at + 7, end = digits;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    if (end > digits && text.compare(end, 3, " ms") == 0 && (end + 3 == text.size() || text[end + 3] == ':'))
      text.erase(at, end + 3 - at);
  }
  return text;
}

std::optional<long> retry_after_ms(const HttpResponse& answer) {
  auto it = answer.headers.find("retry-after");
  if (it == answer.headers.end()) return std::nullopt;
  const std::string& v = it->second;
  if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stol(v) * 1000;
}

std::chrono::milliseconds Backoff::delay(int attempt, const HttpResponse* answer) const {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  long ms = 0;
  if (jitter == Jitter::full) {
    long cap = base_ms;
    for (int i = 0; i < attempt && cap < max_ms; ++i) cap *= 2;
    cap = std::min(cap, max_ms);
    ms = std::uniform_int_distribution<long>(0, std::max(0L, cap))(rng);
  } else {
    long d = base_ms;
    for (int i = 1; i < attempt && d < max_ms; ++i) d *= 2;
    d = std::min(d, max_ms);
    ms = static_cast<long>(static_cast<double>(d) * std::uniform_real_distribution<double>(0.8, 1.2)(rng));
  }
  if (answer)
    if (auto after = retry_after_ms(*answer)) ms = std::max(ms, std::min(*after, max_ms));
  return std::chrono::milliseconds(ms);
}

bool sleep_unless_cancelled(std::chrono::milliseconds d, const std::atomic<bool>* cancel) {
  // In slices, so that a cancel is seen within 20 ms even in a 10 s backoff.
  auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
    if (cancel && cancel->load()) return false;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(20), until - std::chrono::steady_clock::now()));
  }
  return !(cancel && cancel->load());
}

HttpResponse perform_with_retries(HandlePool& pool, const HttpRequest& req, const Transport& transport,
                                  const Backoff& backoff, int max_attempts) {
  int attempts = std::max(1, max_attempts);
  for (int attempt = 1;; ++attempt) {
    if (transport.cancelled()) throw TransferFailure{CURLE_ABORTED_BY_CALLBACK, "cancelled", attempt};
    std::optional<HttpResponse> answer;
    try {
      answer = perform_once(pool, req, transport, attempt);
      if (!retryable_status(answer->status) || attempt >= attempts) return *answer;
    } catch (TransferFailure& f) {
      f.attempts = attempt;
      if (f.cancelled() || !retryable(f) || attempt >= attempts) throw;
    }
    sleep_unless_cancelled(backoff.delay(attempt, answer ? &*answer : nullptr), transport.cancel);
  }
}

std::string percent_encode(std::string_view s, bool keep_slash) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

}  // namespace sx::net
