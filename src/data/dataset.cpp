#include "data/dataset.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <thread>

#include "data/formats.h"
#include "data/source.h"
#include "data/token_cache.h"
#include "data/token_file.h"
#include "s3/client.h"
#include "util/error.h"
#include "util/memory.h"
#include "util/sha256.h"

namespace sx::data {
namespace {

// `total`: the bytes of the source's shards so far, this one included after.
std::string read_checked(const ShardRef& ref, const std::atomic<bool>* stop, uint64_t& total,
                         const std::string& source) {
  auto r = open_shard(ref);
  total += r->size();
  if (total > memory_budget())
    throw UserError(Code::DATA_031, {},
                    fmt::format("source \"{}\" holds {} of data up to {}, more than {}: a loader reads all of it "
                                "into memory",
                                source, bytes_text(total), ref.display, memory_budget_text()),
                    "use a smaller source, or split the data across runs");
  if (ref.bytes && r->size() != *ref.bytes)
    throw UserError(Code::DATA_003, {},
                    fmt::format("shard {} has {} bytes, its manifest says {}", ref.display, r->size(), *ref.bytes),
                    "the file changed or the manifest is stale");
  if (r->size() > static_cast<uint64_t>(SIZE_MAX / 2))
    throw UserError(Code::DATA_013, {}, fmt::format("data file {} is too large to read", ref.display));
  std::string bytes = read_all(*r, stop);
  if (ref.sha256) {
    std::string got = sha256_hex(bytes);
    if (got != *ref.sha256)
      throw UserError(Code::DATA_003, {},
                      fmt::format("shard {} has SHA-256 {}, its manifest says {}", ref.display, got, *ref.sha256),
                      "the file changed or the manifest is stale");
  }
  return bytes;
}

struct Shard {
  std::string name;
  std::shared_ptr<const TokenFile> file;  // read in place; else:
  std::string bytes;                      // read, to be decoded into
  std::vector<int32_t> ids;
  std::exception_ptr error;
};

// Decodes (tokenizes) the shards read into memory, one thread a core at most,
// each shard into its own ids; the first shard's error, in source order, is
// the one thrown, as if they had been decoded one after another.
void decode_in_parallel(const FormatSpec& spec, std::vector<Shard>& shards, const std::atomic<bool>* stop) {
  std::vector<Shard*> todo;
  for (Shard& s : shards)
    if (!s.file) todo.push_back(&s);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < todo.size();) {
      Shard& s = *todo[i];
      try {
        if (stop && stop->load(std::memory_order_relaxed))
          throw UserError(Code::DATA_013, {},
                          fmt::format("reading data file {} was cancelled by a stopping signal", s.name));
        decode_shard_cached(spec, s.name, s.bytes, s.ids);
      } catch (...) {
        s.error = std::current_exception();
      }
      std::string().swap(s.bytes);
    }
  };
  size_t threads = std::min<size_t>(todo.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (Shard* s : todo)
    if (s->error) std::rethrow_exception(s->error);
}

// Where errors point: the value of the loader's key, else the whole declaration.
Span key_span(const LoaderDecl& l, const std::string& key) {
  for (const KeyArg& a : l.keys)
    if (a.key == key && a.expr && a.expr->span.valid()) return a.expr->span;
  return l.span;
}

}  // namespace

std::shared_ptr<const Dataset> Dataset::load(const LoaderDecl& l, const std::string& base_dir,
                                             const std::atomic<bool>* stop) {
  auto d = std::make_shared<Dataset>();
  d->loader_ = l.name, d->span_ = l.span, d->seq_len_ = l.seq_len, d->vocab_ = l.vocab_size();
  try {
    std::optional<Tokenizer> tok;
    if (l.tokenizer) tok.emplace(*l.tokenizer);
    FormatSpec spec{l.format, tok ? &*tok : nullptr, l.vocab.value_or(0), l.field};
    if (tok) d->vocab_ = tok->vocab();
    uint64_t bytes = 0;  // read into memory so far
    bool any_bytes = false;
    bool token_format = l.format == "tokens-u16" || l.format == "tokens-u32";
    std::vector<Shard> shards;
    for (const ShardRef& ref : resolve_source(l.source, base_dir)) {
      Shard& s = shards.emplace_back();
      s.name = ref.display;
      // Read in place unless a manifest's SHA-256 needs every byte anyway, or it is in S3.
      if (token_format && !ref.sha256 && !s3::is_s3(ref.uri)) {
        s.file = TokenFile::open(ref, l.format, spec.vocab, stop);
        if (ref.bytes && s.file->size() != *ref.bytes)
          throw UserError(
              Code::DATA_003, {},
              fmt::format("shard {} has {} bytes, its manifest says {}", ref.display, s.file->size(), *ref.bytes),
              "the file changed or the manifest is stale");
        any_bytes = any_bytes || s.file->size() > 0;  // not held in memory: not counted in `bytes`
      } else {
        s.bytes = read_checked(ref, stop, bytes, l.source);
      }
    }
    decode_in_parallel(spec, shards, stop);
    for (Shard& s : shards) {
      if (s.file) {
        d->add_shard(s.name, s.file->tokens(), {s.file, 0});
        continue;
      }
      int64_t first = static_cast<int64_t>(d->tokens_.size());
      if (d->tokens_.empty())
        d->tokens_ = std::move(s.ids);
      else
        d->tokens_.insert(d->tokens_.end(), s.ids.begin(), s.ids.end());
      std::vector<int32_t>().swap(s.ids);
      d->add_shard(s.name, static_cast<int64_t>(d->tokens_.size()) - first, {nullptr, first});
    }
    if (d->num_tokens() == 0)
      throw UserError(Code::DATA_002, {},
                      fmt::format("source \"{}\" of loader `{}` holds no {}", l.source, l.name,
                                  bytes || any_bytes ? "tokens" : "data"));
    if (d->num_windows() == 0)
      throw UserError(
          Code::DATA_012, {},
          fmt::format("source \"{}\" of loader `{}` has {} tokens, too few for one record of seq-len + 1 = {}",
                      l.source, l.name, d->num_tokens(), l.seq_len + 1),
          "use more data or a shorter :seq-len");
  } catch (UserError& e) {
    bool tokenizer = e.code() == Code::DATA_015 || e.code() == Code::DATA_050 || e.code() == Code::DATA_051;
    if (!e.first().span.valid()) e.first().span = key_span(l, tokenizer ? "tokenizer" : "source");
    e.first().notes.push_back(fmt::format("in: loader `{}`", l.name));
    throw;
  }
  return d;
}

std::shared_ptr<const Dataset> Dataset::from_tokens(std::string loader, std::vector<int32_t> tokens, int64_t seq_len,
                                                    int64_t vocab) {
  SX_ASSERT(seq_len > 0, "seq_len must be positive");
  auto d = std::make_shared<Dataset>();
  d->loader_ = std::move(loader), d->seq_len_ = seq_len, d->vocab_ = vocab;
  d->tokens_ = std::move(tokens);
  d->add_shard("<memory>", static_cast<int64_t>(d->tokens_.size()), {nullptr, 0});
  return d;
}

int64_t Dataset::num_windows() const { return num_tokens() <= 1 || seq_len_ <= 0 ? 0 : (num_tokens() - 1) / seq_len_; }

void Dataset::window(int64_t k, int32_t* tokens, int32_t* targets) const {
  SX_ASSERT(k >= 0 && k < num_windows(), "window index out of range");
  if (!any_file_) {  // every id in tokens_, in order
    const int32_t* p = tokens_.data() + k * seq_len_;
    std::memcpy(tokens, p, sizeof(int32_t) * seq_len_);
    std::memcpy(targets, p + 1, sizeof(int32_t) * seq_len_);
    return;
  }
  read_tokens(k * seq_len_, seq_len_, tokens);
  std::memcpy(targets, tokens + 1, sizeof(int32_t) * (seq_len_ - 1));
  read_tokens((k + 1) * seq_len_, 1, targets + seq_len_ - 1);
}

void Dataset::add_shard(std::string name, int64_t tokens, Piece piece) {
  any_file_ = any_file_ || piece.file;
  shards_.push_back({std::move(name), num_tokens_, tokens});
  pieces_.push_back(std::move(piece));
  num_tokens_ += tokens;
}

void Dataset::read_tokens(int64_t first, int64_t n, int32_t* out) const {
  SX_ASSERT(first >= 0 && n >= 0 && first + n <= num_tokens(), "tokens out of range");
  while (n > 0) {
    auto [shard, at] = locate(first);
    const Piece& piece = pieces_[static_cast<size_t>(shard - shards_.data())];
    int64_t take = std::min(n, shard->tokens - at);
    if (piece.file)
      piece.file->read(at, take, out);
    else
      std::memcpy(out, tokens_.data() + piece.memory_at + at, sizeof(int32_t) * take);
    first += take, out += take, n -= take;
  }
}

std::pair<const ShardInfo*, int64_t> Dataset::locate(int64_t t) const {
  auto it = std::upper_bound(shards_.begin(), shards_.end(), t,
                             [](int64_t v, const ShardInfo& s) { return v < s.first_token; });
  if (it == shards_.begin()) return {nullptr, t};
  --it;
  return {&*it, t - it->first_token};
}

void Dataset::require_windows(int64_t windows, const std::string& what) const {
  if (num_windows() >= windows) return;
  throw UserError(Diagnostic{
      Code::DATA_012,
      fmt::format("loader `{}` has {} windows of seq-len + 1 = {} tokens ({} tokens in all), but {} needs {}", loader_,
                  num_windows(), seq_len_ + 1, num_tokens(), what, windows),
      span_,
      {},
      "use more data, a smaller :batch or :batches, or a shorter :seq-len"});
}

std::string experiment_dir(const LoaderDecl& l) {
  if (!l.span.valid()) return "";
  return std::filesystem::path(Sources::global().get(l.span.file).path).parent_path().string();
}

}  // namespace sx::data
