#pragma once
// Tokenized text kept on disk, so that a second run of the same experiment
// opens its text at the speed of a token file: $XDG_CACHE_HOME/sexpgpu/tokens
// (default ~/.cache/sexpgpu/tokens), one entry per shard, named by a hash of
// the shard's bytes, its format (and jsonl field), the tokenizer file's hash
// and kTokenizerVersion. An entry is written to a temporary file and renamed
// into place (concurrent runs see a whole entry or none) and holds its
// length, its key and the SHA-256 of its ids: one cut short or damaged is
// tokenized again and rewritten, never read. Only (bpe ...) text is cached:
// chars and bytes tokenize faster than an entry could be checked.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "data/formats.h"

namespace sx::data {

// Raised whenever sexpgpu's BPE could give other ids for the same file and
// text: every older entry then misses.
constexpr int kTokenizerVersion = 1;

// Process-wide, for tests and the benchmark.
struct TokenCacheStats {
  std::atomic<int64_t> hits{0}, misses{0}, rebuilt{0}, stored{0};
};
TokenCacheStats& token_cache_stats();

// $XDG_CACHE_HOME/sexpgpu/tokens when XDG_CACHE_HOME is an absolute path,
// else $HOME/.cache/sexpgpu/tokens; empty when neither is set.
std::filesystem::path token_cache_dir();

// The entry file's name for one shard's bytes under `spec` (a bpe tokenizer).
std::string token_cache_key(const FormatSpec& spec, std::string_view bytes);

// decode_shard, through the cache when the spec's tokenizer is a bpe: a whole
// entry is appended to `out` as it is; otherwise the bytes are decoded and the
// entry stored. A cache folder that cannot be written is one warning on
// stderr (once a process); the run goes on without it.
void decode_shard_cached(const FormatSpec& spec, const std::string& name, std::string_view bytes,
                         std::vector<int32_t>& out);

}  // namespace sx::data
