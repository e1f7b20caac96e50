#pragma once
// A loader's data: every shard read, checked and tokenized into one sequence
// of token ids, cut into windows of seq-len + 1
// tokens. Window k starts at token k * seq-len, so a source of N tokens has
// floor((N - 1) / seq-len) windows and consecutive windows share one token.
// Text and jsonl are held in memory as int32; local tokens-u16/u32 files are
// read in place, a record at a time (token_file.h).
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lang/experiment.h"

namespace sx::data {

class TokenFile;  // token_file.h

struct ShardInfo {
  std::string name;     // as errors and positions name it
  int64_t first_token;  // index of its first token in the whole sequence
  int64_t tokens;
};

class Dataset {
 public:
  // Reads everything before the first step: throws a UserError (E-DATA-...)
  // naming the file, with the loader's declaration as its position. Relative
  // sources are relative to `base_dir` (see experiment_dir). `stop` (a
  // stopping signal's flag) cuts the reading short with a UserError.
  static std::shared_ptr<const Dataset> load(const LoaderDecl& loader, const std::string& base_dir,
                                             const std::atomic<bool>* stop = nullptr);
  // For tests and tools: a dataset over given ids (one in-memory shard).
  static std::shared_ptr<const Dataset> from_tokens(std::string loader, std::vector<int32_t> tokens, int64_t seq_len,
                                                    int64_t vocab);

  const std::string& loader() const { return loader_; }
  Span span() const { return span_; }
  int64_t seq_len() const { return seq_len_; }
  int64_t vocab() const { return vocab_; }
  int64_t num_tokens() const { return num_tokens_; }
  int64_t num_windows() const;
  const std::vector<ShardInfo>& shards() const { return shards_; }
  // Tokens [first, first + n) of the whole sequence, across shards.
  void read_tokens(int64_t first, int64_t n, int32_t* out) const;

  // Window k: tokens[0..seq_len) are its first seq-len ids, targets its last seq-len.
  void window(int64_t k, int32_t* tokens, int32_t* targets) const;
  // The shard holding token t, and t's index within it.
  std::pair<const ShardInfo*, int64_t> locate(int64_t t) const;
  // E-DATA-012 unless the source has at least `windows` windows; `what` says who needs them.
  void require_windows(int64_t windows, const std::string& what) const;

 private:
  std::string loader_;
  Span span_;
  int64_t seq_len_ = 0, vocab_ = 0;
  // Shard i's ids: pieces_[i].file, or tokens_ from pieces_[i].memory_at.
  struct Piece {
    std::shared_ptr<const TokenFile> file;
    int64_t memory_at = 0;
  };
  void add_shard(std::string name, int64_t tokens, Piece piece);

  int64_t num_tokens_ = 0;
  std::vector<int32_t> tokens_;
  std::vector<ShardInfo> shards_;
  std::vector<Piece> pieces_;
  bool any_file_ = false;
};

// The directory of the experiment file that declared `loader` ("" when unknown).
std::string experiment_dir(const LoaderDecl& loader);

}  // namespace sx::data
