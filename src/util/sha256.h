#pragma once
// SHA-256 as lowercase hex (OpenSSL EVP): shards against their manifests,
// checkpoint files and COMPLETE, S3 request payloads, the graph's identity.
#include <string>
#include <string_view>

namespace sx {

// The 64 lowercase hex digits of the SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

}  // namespace sx
