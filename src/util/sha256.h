#pragma once
// SHA-256 as lowercase hex (OpenSSL EVP): shards against their manifests,
// checkpoint files and COMPLETE, S3 request payloads, the graph's identity.
#include <string>
#include <string_view>

namespace sx {

// The 64 lowercase hex digits of the SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

// The same over bytes fed in pieces (a file too large to hold at once).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void add(std::string_view bytes);
  std::string hex();  // once, at the end

 private:
  void* ctx_;  // EVP_MD_CTX
};

}  // namespace sx
