#pragma once
// Packing the plan's buffers into one arena: largest first (ties: the earlier
// lifetime, then the earlier buffer), each at the smallest gap that fits among
// the buffers already placed whose lifetimes overlap it (best fit; ties: the
// lowest offset), or above them all.
#include <atomic>
#include <cstdint>
#include <vector>

namespace sx::plan {

struct Buffer {
  int64_t bytes = 0;
  int32_t first = 0, last = 0;  // lifetime in schedule positions, inclusive
};

// Sets offsets[i] for each buffer; returns the arena size. O(n log^2 n) when
// the arena is not fragmented: the free gaps over a lifetime come from a
// segment tree over time of the placed offset ranges, not from every placed buffer.
// `stop` is polled every few hundred buffers (Interrupted).
int64_t pack_buffers(const std::vector<Buffer>& buffers, std::vector<int64_t>& offsets,
                     const std::atomic<bool>* stop = nullptr);

// The same placement computed directly (every placed buffer is compared with
// every new one: quadratic). The tests check that both agree.
int64_t pack_buffers_reference(const std::vector<Buffer>& buffers, std::vector<int64_t>& offsets);

}  // namespace sx::plan
