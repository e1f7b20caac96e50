#include "data/bpe_tables.h"

#include <algorithm>
#include <cstring>

#include "util/error.h"

namespace sx::data {

void BpeMerges::reserve(size_t merges) {
  while ((slots_.size() >> 1) < merges) grow();
}

void BpeMerges::add(int32_t left, int32_t right, int32_t rank, int32_t merged) {
  if ((used_ + 1) * 2 > slots_.size()) grow();
  uint64_t key = pair_key(left, right);
  for (size_t i = slot_of(key);; i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    if (s.key == key) return;
    if (s.key == kEmpty) {
      s.key = key, s.merge = {rank, merged}, ++used_;
      return;
    }
  }
}

void BpeMerges::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 64 : 2 * old.size(), Slot{});
  mask_ = slots_.size() - 1, shift_ = 64 - __builtin_ctzll(slots_.size()), used_ = 0;
  for (const Slot& s : old)
    if (s.key != kEmpty) add(int32_t(s.key >> 32), int32_t(uint32_t(s.key)), s.merge.rank, s.merge.merged);
}

namespace {

// The `r` (< 8) bytes at p as a little-endian integer, read whole rather than
// byte by byte (byte stores read back as a word stall the load).
uint64_t load_partial(const char* p, size_t r) {
  auto byte = [&](size_t i) { return uint64_t(static_cast<unsigned char>(p[i])) << (8 * i); };
  if (r >= 4) {
    uint32_t a, b;
    std::memcpy(&a, p, 4), std::memcpy(&b, p + r - 4, 4);
    return a | (uint64_t(b) << (8 * (r - 4)));  // the overlap ORs equal bytes
  }
  return r == 0 ? 0 : byte(0) | byte(r / 2) | byte(r - 1);
}

}  // namespace

BpeWordCache::Key BpeWordCache::key(std::string_view word) {
  SX_ASSERT(word.size() <= kMaxWord, "a word too long for the word cache");
  Key k;
  size_t whole = word.size() / 8;
  for (size_t i = 0; i < whole; ++i) std::memcpy(&k.bytes[i], word.data() + 8 * i, 8);
  if (whole < 4) k.bytes[whole] = load_partial(word.data() + 8 * whole, word.size() % 8);
  k.len = uint8_t(word.size());
  uint64_t h = k.len;
  for (uint64_t x : k.bytes) h = (h ^ x) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29, h *= 0xBF58476D1CE4E5B9ull, h ^= h >> 32;
  k.hash = h;
  return k;
}

const BpeWordCache::Slot* BpeWordCache::Shard::find(const Key& key) const {
  if (slots.empty()) return nullptr;
  size_t mask = slots.size() - 1;
  uint32_t tag = tag_of(key.hash);
  for (size_t i = (key.hash >> 3) & mask;; i = (i + 1) & mask) {
    const Slot& s = slots[i];
    if (s.tag == 0) return nullptr;
    if (s.tag == tag && s.len == key.len && std::memcmp(s.bytes, key.bytes, kMaxWord) == 0) return &s;
  }
}

BpeWordCache::Slot& BpeWordCache::Shard::place(uint64_t hash) {
  size_t mask = slots.size() - 1;
  size_t i = (hash >> 3) & mask;
  while (slots[i].tag != 0) i = (i + 1) & mask;
  return slots[i];
}

bool BpeWordCache::find(const Key& key, std::vector<int32_t>& out) const {
  const Shard& sh = shard_of(key.hash);
  std::lock_guard<std::mutex> lock(sh.mutex);
  const Slot* s = sh.find(key);
  if (!s) return false;
  out.insert(out.end(), s->ids, s->ids + s->ids_len);
  return true;
}

void BpeWordCache::insert(const Key& key, const int32_t* ids, size_t n) {
  if (n > kMaxIds) return;
  Shard& sh = shard_of(key.hash);
  std::lock_guard<std::mutex> lock(sh.mutex);
  if (sh.find(key)) return;  // another thread encoded it meanwhile
  if ((sh.used + 1) * 2 > sh.slots.size()) {
    if (sh.slots.size() == kShardSlots) {  // full: start over rather than track which words are still in use
      std::fill(sh.slots.begin(), sh.slots.end(), Slot{});
      sh.used = 0;
    } else {
      std::vector<Slot> old(sh.slots.empty() ? 512 : 2 * sh.slots.size());
      old.swap(sh.slots);
      for (const Slot& s : old)
        if (s.tag != 0) sh.place(BpeWordCache::key({s.bytes, s.len}).hash) = s;
      sh.slots_at.store(sh.slots.data(), std::memory_order_relaxed);
      sh.mask.store(sh.slots.size() - 1, std::memory_order_relaxed);
    }
  }
  Slot& s = sh.place(key.hash);
  s.tag = tag_of(key.hash), s.len = key.len, s.ids_len = uint8_t(n);
  std::memcpy(s.bytes, key.bytes, kMaxWord);
  std::copy(ids, ids + n, s.ids);
  ++sh.used;
}

}  // namespace sx::data
