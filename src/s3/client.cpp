// The S3 operations (HEAD, GET, PUT, copy, DELETE, LIST, multipart uploads) as
// requests, and their answers as values or E-S3 errors; transport.cpp performs
// the requests and retries them.
#include "s3/client.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "s3/request.h"
#include "s3/xml.h"
#include "util/markup.h"
#include "util/printable.h"

namespace sx::s3 {

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
  net::curl_api(Code::S3_001,
                "s3:// access");  // loads libcurl now: a missing library is an error here, not at the first request
  while (config_.endpoint.ends_with('/')) config_.endpoint.pop_back();
}

Client::~Client() = default;

namespace {

// The UserError for an answer that is an error.
UserError failed(const Config& c, const char* method, const std::string& bucket, const std::string& key, long status,
                 const std::string& body, int attempts) {
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
  std::string help = sx == Code::S3_003   ? fmt::format("check the {} role's access key, secret and region", c.role)
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
  if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
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
  auto got = get_with_etag(bucket, key);
  if (!got) return std::nullopt;
  return std::move(got->first);
}

std::optional<std::pair<std::string, std::string>> Client::get_with_etag(const std::string& bucket,
                                                                         const std::string& key) {
  Response r = perform(Request{"GET", bucket, key});
  if (r.status == 404 && xml::text(r.body, "Code").value_or("") != "NoSuchBucket") return std::nullopt;
  if (r.status != 200) throw failed(config_, "GET", bucket, key, r.status, r.body, r.attempts);
  return std::make_pair(std::move(r.body), r.headers["etag"]);
}

std::string Client::get_range(const std::string& bucket, const std::string& key, uint64_t offset, uint64_t n) {
  if (n == 0) return {};
  Request req{"GET", bucket, key};
  req.range = {offset, n};
  Response r = perform(req);
  if (r.status == 416)
    throw bad_answer(config_, "GET", bucket, key,
                     fmt::format("bytes {}..{} are past the object's end", offset, offset + n));
  if (r.status == 200 && r.body.size() >= offset + n) return r.body.substr(offset, n);  // range ignored
  if (r.status != 206 && r.status != 200) throw failed(config_, "GET", bucket, key, r.status, r.body, r.attempts);
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

std::optional<std::string> Client::put_if(const std::string& bucket, const std::string& key, std::string_view bytes,
                                          const std::string& if_etag) {
  Request req{"PUT", bucket, key};
  req.body = bytes;
  req.headers = {"Content-Type: application/octet-stream",
                 if_etag.empty() ? std::string("If-None-Match: *") : "If-Match: " + if_etag};
  Response r = perform(req);
  // 409: a conditional write raced another one in flight and wrote nothing; S3 says to retry.
  for (int i = 0; i < 4 && r.status == 409; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50 << i));
    r = perform(req);
  }
  // If-Match on an object that is not there: AWS answers 404 NoSuchKey, others 412.
  if (r.status == 412 ||
      (r.status == 404 && !if_etag.empty() && xml::text(r.body, "Code").value_or("") != "NoSuchBucket"))
    return std::nullopt;
  if (r.status != 200) throw failed(config_, "PUT", bucket, key, r.status, r.body, r.attempts);
  std::string etag = r.headers["etag"];
  if (etag.empty()) throw bad_answer(config_, "PUT", bucket, key, "no ETag in the answer");
  return etag;
}

void Client::put_multipart(const std::string& bucket, const std::string& key, std::string_view bytes) {
  Request start{"POST", bucket, key};
  start.query = {{"uploads", ""}};
  start.headers = {"Content-Type: application/octet-stream"};
  Response r = perform(start);
  if (r.status != 200) throw failed(config_, "POST (start upload)", bucket, key, r.status, r.body, r.attempts);
  std::string id = xml::text(r.body, "UploadId").value_or("");
  if (id.empty()) throw bad_answer(config_, "POST", bucket, key, "no UploadId in the answer to start an upload");
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
      done += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", n, escape_markup(etag));
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
  req.headers = {"x-amz-copy-source: /" + percent_encode(bucket, false) + "/" + percent_encode(from_key, true)};
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
    req.query = {{"list-type", "2"}, {"prefix", prefix}, {"max-keys", std::to_string(config_.list_page_size)}};
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

}  // namespace sx::s3
