#pragma once
// The S3 client's internals shared by its files: one request and its answer,
// the pool of easy handles (net/http.h; transport.cpp performs requests,
// client.cpp builds them for each S3 operation).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/http.h"
#include "s3/client.h"
#include "util/error.h"

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

struct Client::Response : net::HttpResponse {
  Response() = default;
  Response(net::HttpResponse r) : net::HttpResponse(std::move(r)) {}
};

struct Client::Pool : net::HandlePool {};

using net::trim;

// "PUT s3://bucket/key", as messages show a request.
std::string describe(const char* method, const std::string& bucket, const std::string& key);

}  // namespace sx::s3
