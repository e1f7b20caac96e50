#pragma once
// Shuffling without std::shuffle or std::*_distribution (whose output differs
// between standard libraries): Fisher-Yates with unbiased bounded integers
// drawn from Philox-4x32-10, keyed by the run's seed and the loader's name,
// with the epoch as the counter offset.
#include <cstdint>
#include <string_view>
#include <vector>

#include "graph/philox.h"

namespace sx::data {

// The 32-bit words of one Philox stream, in order: word e is word e % 4 of the
// block at counter {e / 4, stream, offset lo, offset hi} (philox::bits' convention).
class PhiloxWords {
 public:
  PhiloxWords(uint64_t key, uint32_t stream, uint64_t offset) : key_(key), stream_(stream), offset_(offset) {}
  uint32_t next();
  uint64_t next64() {
    uint64_t hi = next();
    return hi << 32 | next();
  }

 private:
  uint64_t key_;
  uint32_t stream_;
  uint64_t offset_;
  uint64_t e_ = 0;
  philox::Block block_{};
};

// Uniform in [0, n), n >= 1, unbiased (Lemire's multiply-and-reject on 64-bit draws).
uint64_t bounded(PhiloxWords& words, uint64_t n);

// The Philox key and stream of a loader's shuffle: key = seed ^ "datashuf", stream = FNV-1a-32 of the name.
uint64_t shuffle_key(uint64_t seed);
uint32_t loader_stream(std::string_view loader);

// The order in which epoch `epoch` visits windows 0..n-1 (a permutation).
std::vector<int64_t> epoch_permutation(int64_t n, uint64_t seed, std::string_view loader, int64_t epoch);

}  // namespace sx::data
