// Requests, retries and errors. Each request takes an easy handle from a small
// pool (so connections are reused), sets everything afresh, and signs with
// libcurl's SigV4; see client.h for the rules followed.
#include "s3/client.h"


#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "s3/curl_api.h"
#include "s3/xml.h"
#include "util/error.h"
#include "util/printable.h"
#include "util/sha256.h"

namespace sx::s3 {

struct Client::Request {
  Request(const char* m, std::string b, std::string k) : method(m), bucket(std::move(b)), key(std::move(k)) {}
  const char* method;
  std::string bucket, key;
  std::vector<std::pair<std::string, std::string>> query;  // sorted here, not by libcurl
  std::vector<std::string> headers;
  std::string_view body;
  std::optional<std::pair<uint64_t, uint64_t>> range;  // offset, n > 0
  // A 2xx answer without Content-Length is taken for one cut in its headers
  // (HEAD: the length is the answer), a transfer error, and retried.
  bool needs_length = false;
};

struct Client::Response {
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names lowercase
  int attempts = 0;
};

struct Client::Pool {
  std::mutex mu;
  std::vector<CURL*> free;
  ~Pool() {
    for (CURL* c : free) curl_api().easy_cleanup(c);
  }
};

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
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

bool is_s3(std::string_view uri) { return uri.starts_with("s3://"); }

Address parse_address(std::string_view uri) {
  std::string_view rest = uri.substr(is_s3(uri) ? 5 : 0);
  size_t slash = rest.find('/');
  Address a{std::string(rest.substr(0, slash)),
            slash == std::string_view::npos ? std::string() : std::string(rest.substr(slash + 1))};
  if (!is_s3(uri) || a.bucket.empty())
    throw UserError(Code::S3_007, {}, fmt::format("expected s3://<bucket>/<key>, found {}", uri));
  return a;
}

Config config_from(const S3Credentials& creds) {
  Config c;
  c.endpoint = creds.endpoint_url.value;
  while (c.endpoint.ends_with('/')) c.endpoint.pop_back();
  c.region = creds.region.value;
  c.access_key_id = creds.access_key_id;
  c.secret_access_key = creds.secret_access_key;
  c.session_token = creds.session_token;
  c.role = std::string(to_string(creds.role));
  return c;
}

Client::Client(Config config) : config_(std::move(config)), pool_(std::make_unique<Pool>()) {
  curl_api();  // loads libcurl now: a missing library is an error here, not at the first request
  while (config_.endpoint.ends_with('/')) config_.endpoint.pop_back();
}

Client::~Client() = default;

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
    url += (i ? "&" : "?") + percent_encode(query[i].first, false) + "=" +
           percent_encode(query[i].second, false);

  curl_slist* headers = nullptr;
  auto add = [&](const std::string& h) { headers = curl_api().slist_append(headers, h.c_str()); };
  add("x-amz-content-sha256: " + sha256_hex(req.body));
  if (config_.session_token.set()) add("x-amz-security-token: " + config_.session_token.reveal());
  if (req.range)
    add(fmt::format("Range: bytes={}-{}", req.range->first, req.range->first + req.range->second - 1));
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

namespace {

std::string describe(const char* method, const std::string& bucket, const std::string& key) {
  return fmt::format("{} s3://{}/{}", method, bucket, key);
}

}  // namespace

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

namespace {

// The UserError for an answer that is an error.
UserError failed(const Config& c, const char* method, const std::string& bucket, const std::string& key,
                 long status, const std::string& body, int attempts) {
  std::string code = xml::text(body, "Code").value_or("");
  std::string message = xml::text(body, "Message").value_or("");
  if (message.size() > 200) message = message.substr(0, 200) + "...";
  Code sx = status == 403                             ? Code::S3_003
            : status == 404 && code == "NoSuchBucket" ? Code::S3_004
            : status == 404                           ? Code::S3_002
            : status >= 200 && status < 300           ? Code::S3_006
                                                      : Code::S3_005;
  std::string text = fmt::format("cannot {} at {} ({} role): HTTP {}", describe(method, bucket, key),
                                 without_userinfo(c.endpoint), c.role, status);
  if (!code.empty()) text += " " + code;
  if (!message.empty()) text += ": " + message;
  if (attempts > 1) text += fmt::format(", after {} tries", attempts);
  std::string help = sx == Code::S3_003
                         ? fmt::format("check the {} role's access key, secret and region", c.role)
                     : sx == Code::S3_004 ? "check the bucket and the role's ENDPOINT_URL"
                                          : "";
  return UserError(sx, {}, text, help);
}

UserError bad_answer(const Config& c, const char* method, const std::string& bucket, const std::string& key,
                     const std::string& what) {
  return UserError(Code::S3_006, {},
                   fmt::format("cannot {} at {} ({} role): {}", describe(method, bucket, key),
                               without_userinfo(c.endpoint), c.role, what));
}

std::optional<uint64_t> to_u64(const std::string& s) {
  if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoull(s);
}

}  // namespace

std::optional<Object> Client::head(const std::string& bucket, const std::string& key) {
  Request req{"HEAD", bucket, key};
  req.needs_length = true;
  Response r = perform(req);
  if (r.status == 404) return std::nullopt;
  if (r.status != 200) throw failed(config_, "HEAD", bucket, key, r.status, r.body, r.attempts);
  auto size = to_u64(r.headers["content-length"]);
  if (!size) throw bad_answer(config_, "HEAD", bucket, key, "no Content-Length");
  return Object{key, *size, r.headers["etag"]};
}

std::optional<std::string> Client::get(const std::string& bucket, const std::string& key) {
  Response r = perform(Request{"GET", bucket, key});
  if (r.status == 404 && xml::text(r.body, "Code").value_or("") != "NoSuchBucket") return std::nullopt;
  if (r.status != 200) throw failed(config_, "GET", bucket, key, r.status, r.body, r.attempts);
  return std::move(r.body);
}

std::string Client::get_range(const std::string& bucket, const std::string& key, uint64_t offset,
                              uint64_t n) {
  if (n == 0) return {};
  Request req{"GET", bucket, key};
  req.range = {offset, n};
  Response r = perform(req);
  if (r.status == 416)
    throw bad_answer(config_, "GET", bucket, key,
                     fmt::format("bytes {}..{} are past the object's end", offset, offset + n));
  if (r.status == 200 && r.body.size() >= offset + n) return r.body.substr(offset, n);  // range ignored
  if (r.status != 206 && r.status != 200)
    throw failed(config_, "GET", bucket, key, r.status, r.body, r.attempts);
  if (r.status != 206 || r.body.size() != n)
    throw bad_answer(config_, "GET", bucket, key,
                     fmt::format("asked for {} bytes at {}, got {}", n, offset, r.body.size()));
  return std::move(r.body);
}

void Client::put(const std::string& bucket, const std::string& key, std::string_view bytes) {
  if (bytes.size() > config_.multipart_threshold) return put_multipart(bucket, key, bytes);
  Request req{"PUT", bucket, key};
  req.body = bytes;
  req.headers = {"Content-Type: application/octet-stream"};
  Response r = perform(req);
  if (r.status != 200) throw failed(config_, "PUT", bucket, key, r.status, r.body, r.attempts);
}

void Client::put_multipart(const std::string& bucket, const std::string& key, std::string_view bytes) {
  Request start{"POST", bucket, key};
  start.query = {{"uploads", ""}};
  start.headers = {"Content-Type: application/octet-stream"};
  Response r = perform(start);
  if (r.status != 200)
    throw failed(config_, "POST (start upload)", bucket, key, r.status, r.body, r.attempts);
  std::string id = xml::text(r.body, "UploadId").value_or("");
  if (id.empty())
    throw bad_answer(config_, "POST", bucket, key, "no UploadId in the answer to start an upload");
  try {
    uint64_t part = std::max<uint64_t>(config_.part_size, (bytes.size() + 9999) / 10000);
    std::string done = "<CompleteMultipartUpload>";
    for (uint64_t off = 0, n = 1; off < bytes.size(); off += part, ++n) {
      Request up{"PUT", bucket, key};
      up.query = {{"partNumber", std::to_string(n)}, {"uploadId", id}};
      up.body = bytes.substr(off, part);
      Response p = perform(up);
      if (p.status != 200) throw failed(config_, "PUT (part)", bucket, key, p.status, p.body, p.attempts);
      std::string etag = p.headers["etag"];
      if (etag.empty()) throw bad_answer(config_, "PUT", bucket, key, "no ETag for an uploaded part");
      done += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", n, xml::escape(etag));
    }
    done += "</CompleteMultipartUpload>";
    Request fin{"POST", bucket, key};
    fin.query = {{"uploadId", id}};
    fin.body = done;
    fin.headers = {"Content-Type: application/xml"};
    Response f = perform(fin);
    // S3 may answer 200 and then an <Error> in the body.
    if (f.status != 200 || f.body.find("<Error>") != std::string::npos)
      throw failed(config_, "POST (complete upload)", bucket, key, f.status == 200 ? 500 : f.status, f.body,
                   f.attempts);
  } catch (const UserError&) {
    try {
      Request abort{"DELETE", bucket, key};
      abort.query = {{"uploadId", id}};
      perform(abort);
    } catch (const UserError&) {
    }
    throw;
  }
}

void Client::copy(const std::string& bucket, const std::string& from_key, const std::string& to_key) {
  Request req{"PUT", bucket, to_key};
  req.headers = {"x-amz-copy-source: /" + percent_encode(bucket, false) + "/" +
                 percent_encode(from_key, true)};
  Response r = perform(req);
  if (r.status != 200 || r.body.find("<Error>") != std::string::npos)
    throw failed(config_, "PUT (copy)", bucket, to_key, r.status == 200 ? 500 : r.status, r.body, r.attempts);
}

void Client::remove(const std::string& bucket, const std::string& key) {
  Response r = perform(Request{"DELETE", bucket, key});
  if (r.status != 204 && r.status != 200 && r.status != 404)
    throw failed(config_, "DELETE", bucket, key, r.status, r.body, r.attempts);
  if (r.status == 404 && xml::text(r.body, "Code").value_or("") == "NoSuchBucket")
    throw failed(config_, "DELETE", bucket, key, r.status, r.body, r.attempts);
}

Listing Client::list(const std::string& bucket, const std::string& prefix, const std::string& delimiter) {
  Listing out;
  std::string token;
  for (;;) {
    Request req{"GET", bucket, ""};
    req.query = {
        {"list-type", "2"}, {"prefix", prefix}, {"max-keys", std::to_string(config_.list_page_size)}};
    if (!delimiter.empty()) req.query.emplace_back("delimiter", delimiter);
    if (!token.empty()) req.query.emplace_back("continuation-token", token);
    Response r = perform(req);
    std::string what = prefix + "*";
    if (r.status != 200) throw failed(config_, "LIST", bucket, what, r.status, r.body, r.attempts);
    if (xml::elements(r.body, "ListBucketResult").empty())
      throw bad_answer(config_, "LIST", bucket, what, "the answer is not a ListBucketResult");
    for (std::string_view c : xml::elements(r.body, "Contents")) {
      auto key = xml::text(c, "Key");
      auto size = to_u64(trim(xml::text(c, "Size").value_or("")));
      if (!key || !size) throw bad_answer(config_, "LIST", bucket, what, "an entry without a Key or Size");
      out.objects.push_back({*key, *size, xml::text(c, "ETag").value_or("")});
    }
    for (std::string_view p : xml::elements(r.body, "CommonPrefixes"))
      if (auto s = xml::text(p, "Prefix")) out.prefixes.push_back(*s);
    if (trim(xml::text(r.body, "IsTruncated").value_or("false")) != "true") break;
    std::string next = xml::text(r.body, "NextContinuationToken").value_or("");
    if (next.empty() || next == token)
      throw bad_answer(config_, "LIST", bucket, what, "a truncated listing without a new continuation token");
    token = next;
  }
  std::sort(out.objects.begin(), out.objects.end(), [](auto& a, auto& b) { return a.key < b.key; });
  return out;
}

namespace {

std::mutex registry_mu;
std::map<S3Role, S3Credentials> registry_creds;
std::map<S3Role, const std::atomic<bool>*> registry_cancel;
std::map<S3Role, std::shared_ptr<Client>> registry_clients;

}  // namespace

void set_credentials(const S3Credentials& creds, const std::atomic<bool>* cancel) {
  std::lock_guard lock(registry_mu);
  registry_creds[creds.role] = creds;
  registry_cancel[creds.role] = cancel;
  registry_clients.erase(creds.role);
}

void set_client(S3Role role, std::shared_ptr<Client> client) {
  std::lock_guard lock(registry_mu);
  registry_clients[role] = std::move(client);
}

std::shared_ptr<Client> client_for(S3Role role, std::string_view needed_by) {
  std::lock_guard lock(registry_mu);
  if (auto it = registry_clients.find(role); it != registry_clients.end() && it->second) return it->second;
  auto it = registry_creds.find(role);
  S3Credentials creds = it != registry_creds.end() ? it->second : S3Credentials{role, {}, {}, {}, {}, {}};
  require_s3(creds, needed_by);
  Config config = config_from(creds);
  config.cancel = registry_cancel[role];
  auto client = std::make_shared<Client>(std::move(config));
  registry_clients[role] = client;
  return client;
}

}  // namespace sx::s3
