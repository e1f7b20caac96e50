#include "data/dataset.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "data/formats.h"
#include "util/sha256.h"
#include "data/source.h"
#include "util/error.h"
#include "util/memory.h"

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
    uint64_t bytes = 0;
    for (const ShardRef& ref : resolve_source(l.source, base_dir)) {
      std::string data = read_checked(ref, stop, bytes, l.source);
      int64_t first = d->num_tokens();
      decode_shard(spec, ref.display, data, d->tokens_);
      d->shards_.push_back({ref.display, first, d->num_tokens() - first});
    }
    if (d->tokens_.empty())
      throw UserError(
          Code::DATA_002, {},
          fmt::format("source \"{}\" of loader `{}` holds no {}", l.source, l.name, bytes ? "tokens" : "data"));
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
  d->shards_.push_back({"<memory>", 0, d->num_tokens()});
  return d;
}

int64_t Dataset::num_windows() const { return num_tokens() <= 1 || seq_len_ <= 0 ? 0 : (num_tokens() - 1) / seq_len_; }

void Dataset::window(int64_t k, int32_t* tokens, int32_t* targets) const {
  SX_ASSERT(k >= 0 && k < num_windows(), "window index out of range");
  const int32_t* p = tokens_.data() + k * seq_len_;
  std::memcpy(tokens, p, sizeof(int32_t) * seq_len_);
  std::memcpy(targets, p + 1, sizeof(int32_t) * seq_len_);
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
