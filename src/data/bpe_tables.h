#pragma once
// The two tables an encode looks up at every word: the merges by pair of ids,
// and the words seen before. Both open-addressed in flat arrays: a lookup is
// a probe or two in memory, not a walk through allocated nodes.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

namespace sx::data {

class BpeMerges {
 public:
  struct Merge {
    int32_t rank = 0, merged = 0;
  };
  void reserve(size_t merges);
  // A pair already there keeps its first (lowest) rank, as in Hugging Face's reader.
  void add(int32_t left, int32_t right, int32_t rank, int32_t merged);
  const Merge* find(int32_t left, int32_t right) const {
    if (slots_.empty()) return nullptr;
    uint64_t key = pair_key(left, right);
    for (size_t i = slot_of(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) return &s.merge;
      if (s.key == kEmpty) return nullptr;
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // ids are below 2^31: no pair has this key
  struct Slot {
    uint64_t key = kEmpty;
    Merge merge;
  };
  static uint64_t pair_key(int32_t l, int32_t r) { return (uint64_t(uint32_t(l)) << 32) | uint32_t(r); }
  size_t slot_of(uint64_t key) const { return size_t((key * 0x9E3779B97F4A7C15ull) >> shift_); }
  void grow();
  std::vector<Slot> slots_;
  size_t mask_ = 0, used_ = 0;
  int shift_ = 64;
};

// Words already encoded and their ids, shared by the threads that encode
// with one tokenizer: sharded by hash with a lock each (two threads seldom
// want the same shard at once), and bounded: a full shard starts over. A
// word and its ids fill one cache line, so a lookup costs one memory access.
class BpeWordCache {
 public:
  static constexpr size_t kMaxWord = 26, kMaxIds = 8;  // longer words are rare: encoded every time
  struct Key {
    uint64_t bytes[4] = {};  // the word, zero-padded: compared whole
    uint64_t hash = 0;
    uint8_t len = 0;
  };
  static Key key(std::string_view word);  // word.size() <= kMaxWord
  // Starts fetching the key's slot, so that the find a few words later does not wait for memory.
  void prefetch(const Key& key) const {
    const Shard& sh = shard_of(key.hash);
    const Slot* slots = sh.slots_at.load(std::memory_order_relaxed);  // a stale one: a useless, harmless hint
    if (slots) __builtin_prefetch(slots + ((key.hash >> 3) & sh.mask.load(std::memory_order_relaxed)));
  }
  // Appends the ids of the word to `out`; false when it is not cached.
  bool find(const Key& key, std::vector<int32_t>& out) const;
  void insert(const Key& key, const int32_t* ids, size_t n);  // not kept when n > kMaxIds

 private:
  static constexpr size_t kShards = 8;
  static constexpr size_t kShardSlots = size_t{1} << 15;  // 2 MB, half full at most: 128 Ki words in all
  struct alignas(64) Slot {
    uint32_t tag = 0;  // 0: empty
    uint8_t len = 0, ids_len = 0;
    char bytes[kMaxWord] = {};
    int32_t ids[kMaxIds] = {};
  };
  static_assert(sizeof(Slot) == 64);
  struct Shard {
    mutable std::mutex mutex;
    std::vector<Slot> slots;  // a power of two, at most half full
    size_t used = 0;
    std::atomic<const Slot*> slots_at{nullptr};  // slots.data() and its mask, for prefetch without the lock
    std::atomic<size_t> mask{0};
    const Slot* find(const Key& key) const;
    Slot& place(uint64_t hash);
  };
  static uint32_t tag_of(uint64_t hash) { return uint32_t(hash >> 32) | 1; }
  Shard& shard_of(uint64_t hash) const { return shards_[hash % kShards]; }
  mutable Shard shards_[kShards];
};

}  // namespace sx::data
