#include "util/sha256.h"

#include <openssl/evp.h>

#include "util/error.h"

namespace sx {

namespace {
std::string to_hex(const unsigned char* digest, unsigned len) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out.push_back(hex[digest[i] >> 4]);
    out.push_back(hex[digest[i] & 15]);
  }
  return out;
}
}  // namespace

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  bool ok = EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr) == 1;
  SX_ASSERT(ok && len == 32, "SHA-256 failed");
  return to_hex(digest, len);
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  SX_ASSERT(ctx_ && EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) == 1,
            "SHA-256 failed to start");
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::add(std::string_view bytes) {
  SX_ASSERT(EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(), bytes.size()) == 1, "SHA-256 failed");
}

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  SX_ASSERT(EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), digest, &len) == 1 && len == 32, "SHA-256 failed");
  return to_hex(digest, len);
}

}  // namespace sx
