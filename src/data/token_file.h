#pragma once
// tokens-u16 / tokens-u32 shards read in place: a 4 GB file opens in the time
// of a stat and a header read, and each record is one pread of its bytes.
// pread, not mmap: a file that shrinks under the run (truncated, rewritten)
// is a short read and a coded error naming it, where a mapping would be a
// SIGBUS. nanoGPT's .bin files are raw ids; llm.c's begin with a 256-int32
// header (magic 20240520, version, token count), recognised, checked and
// skipped.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "data/shard_reader.h"

namespace sx::data {

// llm.c's header: 256 little-endian int32, the magic, the version (1: uint16
// ids, 2: uint32 ids), the number of tokens, zeros.
constexpr uint32_t kLlmcMagic = 20240520;
constexpr uint64_t kLlmcHeaderBytes = 256 * 4;

// Where the ids of a token file start: 0 for raw ids, kLlmcHeaderBytes after
// an llm.c header. `head` is the file's first bytes (up to kLlmcHeaderBytes),
// `size` its size. Throws E-DATA-060 (an llm.c-shaped header with another
// magic), E-DATA-061 (a version that is not this :format's), E-DATA-062 (a
// token count that does not match the size).
uint64_t token_data_offset(const std::string& name, const std::string& format, std::string_view head, uint64_t size);

class TokenFile {
 public:
  // Files up to this size have every id checked at open (an error before the
  // first step); larger ones have each record's ids checked as it is read.
  static constexpr uint64_t kCheckedAtOpen = 256ull << 20;

  // `format` is tokens-u16 or tokens-u32; ids must be below `vocab` (<= 0:
  // below 2^31). Throws what open_shard and token_data_offset throw,
  // E-DATA-009 (a size not a multiple of the width), E-DATA-008.
  static std::shared_ptr<const TokenFile> open(const ShardRef& ref, const std::string& format, int64_t vocab,
                                               const std::atomic<bool>* stop = nullptr);
  ~TokenFile();
  TokenFile(const TokenFile&) = delete;
  TokenFile& operator=(const TokenFile&) = delete;

  int64_t tokens() const { return count_; }
  uint64_t size() const { return size_; }  // the file's bytes at open, its header included
  // Ids [first, first + n) as int32. Throws E-DATA-008 (an id at or above the
  // vocabulary) or E-DATA-063 (the file is shorter than at open). Thread-safe.
  void read(int64_t first, int64_t n, int32_t* out) const;

 private:
  TokenFile() = default;
  void check_ids(const int32_t* ids, int64_t n, int64_t first) const;

  std::string name_;
  int fd_ = -1;
  int width_ = 0;
  int64_t limit_ = 0;
  uint64_t offset_ = 0;  // of the first id
  uint64_t size_ = 0;    // at open
  int64_t count_ = 0;
};

}  // namespace sx::data
