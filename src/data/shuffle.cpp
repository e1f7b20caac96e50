#include "data/shuffle.h"

#include <numeric>

namespace sx::data {

uint32_t PhiloxWords::next() {
  if (e_ % 4 == 0)
    block_ = philox::philox4x32_10({static_cast<uint32_t>(e_ / 4), stream_, static_cast<uint32_t>(offset_),
                                    static_cast<uint32_t>(offset_ >> 32)},
                                   {static_cast<uint32_t>(key_), static_cast<uint32_t>(key_ >> 32)});
  return block_[e_++ % 4];
}

uint64_t bounded(PhiloxWords& words, uint64_t n) {
  unsigned __int128 m = static_cast<unsigned __int128>(words.next64()) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    uint64_t threshold = (0 - n) % n;  // 2^64 mod n
    while (low < threshold) {
      m = static_cast<unsigned __int128>(words.next64()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

uint64_t shuffle_key(uint64_t seed) { return seed ^ 0x6461746173687566ull; }  // "datashuf"

uint32_t loader_stream(std::string_view loader) {
  uint32_t h = 2166136261u;
  for (unsigned char c : loader) h = (h ^ c) * 16777619u;
  return h;
}

std::vector<int64_t> epoch_permutation(int64_t n, uint64_t seed, std::string_view loader, int64_t epoch) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), int64_t{0});
  PhiloxWords words(shuffle_key(seed), loader_stream(loader), static_cast<uint64_t>(epoch));
  for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[bounded(words, static_cast<uint64_t>(i) + 1)]);
  return p;
}

}  // namespace sx::data
