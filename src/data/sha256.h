#pragma once
// SHA-256 as lowercase hex (OpenSSL EVP), for checking shards against manifests.
#include <string>
#include <string_view>

namespace sx::data {
std::string sha256_hex(std::string_view bytes);
}  // namespace sx::data
