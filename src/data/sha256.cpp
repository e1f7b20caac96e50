#include "data/sha256.h"

#include <openssl/evp.h>

#include <memory>

#include "util/error.h"

namespace sx::data {

std::string sha256_hex(std::string_view bytes) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  bool ok = ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1 &&
            EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()) == 1 &&
            EVP_DigestFinal_ex(ctx.get(), md, &len) == 1;
  SX_ASSERT(ok && len == 32, "SHA-256 failed");
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) out += hex[md[i] >> 4], out += hex[md[i] & 15];
  return out;
}

}  // namespace sx::data
