#pragma once
// libcurl, loaded on first use (dlopen of libcurl.so.4) rather than linked:
// its dependencies (TLS, HTTP/2, LDAP, ...) cost most of a process start, and
// only runs that touch s3:// need them — `sexpgpu check` never does.
#include <curl/curl.h>

namespace sx::s3 {

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

// The loaded library, with curl_global_init done; E-S3-001 naming the library
// and the loader's reason when it cannot be loaded.
const CurlApi& curl_api();

}  // namespace sx::s3
