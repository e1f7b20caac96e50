#pragma once
// libcurl, loaded on first use (dlopen of libcurl.so.4) rather than linked:
// its dependencies (TLS, HTTP/2, LDAP, ...) cost most of a process start, and
// only runs that talk HTTP (s3://, the syvain metrics target) need them —
// `sexpgpu check` never does.
#include <curl/curl.h>

#include <string_view>

#include "util/error.h"

namespace sx::net {

struct CurlApi {
  CURLcode (*global_init)(long flags);
  CURL* (*easy_init)();
  void (*easy_reset)(CURL*);
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  void (*easy_cleanup)(CURL*);
  const char* (*easy_strerror)(CURLcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
};

// The loaded library, with curl_global_init done. When it cannot be loaded:
// a UserError with `code`, saying it was needed `for` (e.g. "s3:// access"),
// naming the library and the loader's reason.
const CurlApi& curl_api(Code code, std::string_view needed_for);
// The library a curl_api(code, ...) call already loaded.
const CurlApi& curl_api();

}  // namespace sx::net
