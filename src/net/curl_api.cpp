#include "net/curl_api.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace sx::net {
namespace {

constexpr const char* kLibrary = "libcurl.so.4";

template <typename F>
void bind(void* lib, F& f, const char* name, std::string& missing) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (f == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
}

struct Loaded {
  CurlApi api{};
  std::string failure;
};

const Loaded& loaded() {
  static Loaded l;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* why = dlerror();
      l.failure = why ? why : "not found";
      return;
    }
    CurlApi& api = l.api;
    std::string missing;
    bind(lib, api.global_init, "curl_global_init", missing);
    bind(lib, api.easy_init, "curl_easy_init", missing);
    bind(lib, api.easy_reset, "curl_easy_reset", missing);
    bind(lib, api.easy_setopt, "curl_easy_setopt", missing);
    bind(lib, api.easy_perform, "curl_easy_perform", missing);
    bind(lib, api.easy_getinfo, "curl_easy_getinfo", missing);
    bind(lib, api.easy_cleanup, "curl_easy_cleanup", missing);
    bind(lib, api.easy_strerror, "curl_easy_strerror", missing);
    bind(lib, api.slist_append, "curl_slist_append", missing);
    bind(lib, api.slist_free_all, "curl_slist_free_all", missing);
    if (!missing.empty()) {
      l.failure = "it lacks " + missing;
      return;
    }
    api.global_init(CURL_GLOBAL_DEFAULT);
  });
  return l;
}

}  // namespace

const CurlApi& curl_api(Code code, std::string_view needed_for) {
  const Loaded& l = loaded();
  if (!l.failure.empty())
    throw UserError(code, {}, fmt::format("cannot load {} for {}: {}", kLibrary, needed_for, l.failure),
                    "install libcurl (Debian: apt-get install libcurl4)");
  return l.api;
}

const CurlApi& curl_api() {
  const Loaded& l = loaded();
  SX_ASSERT(l.failure.empty(), "libcurl used before curl_api(code, ...) loaded it");
  return l.api;
}

}  // namespace sx::net
