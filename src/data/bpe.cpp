// Encoding with a BpeTokenizer: added tokens out first, then normalizing,
// pre-tokenizing, the byte-to-character map and the merges, word by word.
#include "data/bpe.h"

#include <utf8proc.h>

#include <cstring>

#include "data/bpe_regex.h"
#include "util/error.h"

namespace sx::data {
namespace {

bool ascii(std::string_view s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;  // ASCII is the same in every normal form
}

// Splits `text` at the leftmost-longest occurrences of `tokens` (sorted
// longest first): gap(text piece) and token(id) in order.
template <class Gap, class Token>
void split_added(std::string_view text, const std::vector<BpeAddedToken>& tokens, Gap&& gap, Token&& token) {
  if (tokens.empty()) return gap(text);
  bool first[256] = {};
  for (const auto& t : tokens) first[static_cast<unsigned char>(t.content[0])] = true;
  size_t from = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (!first[static_cast<unsigned char>(text[i])]) continue;
    for (const auto& t : tokens) {
      if (text.compare(i, t.content.size(), t.content) != 0) continue;
      if (i > from) gap(text.substr(from, i - from));
      token(t.id);
      from = i + t.content.size(), i = from - 1;
      break;
    }
  }
  if (from < text.size()) gap(text.substr(from));
}

}  // namespace

BpeTokenizer::BpeTokenizer() = default;
BpeTokenizer::~BpeTokenizer() = default;

void BpeTokenizer::encode(std::string_view text, std::vector<int32_t>& out) const {
  // About one token per four bytes of English: reserve by doubling, linear over many calls.
  size_t want = out.size() + text.size() / 3 + 16;
  if (out.capacity() < want) out.reserve(std::max(want, 2 * out.capacity()));
  split_added(
      text, raw_tokens_, [&](std::string_view seg) { encode_segment(seg, out); },
      [&](int32_t id) { out.push_back(id); });
}

// The word cache is too big for the CPU's caches: a lookup waits for memory
// unless its slot was asked for a few words before.
struct BpeTokenizer::Words {
  static constexpr size_t kAhead = 8;
  const BpeTokenizer& t;
  std::vector<int32_t>& out;
  std::string_view word[kAhead];
  BpeWordCache::Key key[kAhead];
  size_t first = 0, count = 0;  // a ring, in text order

  Words(const BpeTokenizer& t, std::vector<int32_t>& out) : t(t), out(out) {}
  void add(std::string_view w) {
    if (w.empty()) return;
    if (!t.cache_ || w.size() > BpeWordCache::kMaxWord) {
      flush();
      return t.encode_word(w, nullptr, out);
    }
    if (count == kAhead) {
      t.encode_word(word[first], &key[first], out);
      first = (first + 1) % kAhead, --count;
    }
    size_t i = (first + count++) % kAhead;
    word[i] = w, key[i] = BpeWordCache::key(w);
    t.cache_->prefetch(key[i]);
  }
  void flush() {
    for (; count > 0; first = (first + 1) % kAhead, --count) t.encode_word(word[first], &key[first], out);
  }
};

void BpeTokenizer::encode_segment(std::string_view raw, std::vector<int32_t>& out) const {
  std::string normalized;
  std::string_view text = raw;
  if (!normalizers_.empty() && !ascii(raw)) {
    normalized.assign(raw);
    for (Norm n : normalizers_) {
      utf8proc_uint8_t* dst = nullptr;
      int opts = UTF8PROC_STABLE | UTF8PROC_COMPOSE | (n == Norm::nfkc ? UTF8PROC_COMPAT : 0);
      utf8proc_ssize_t len =
          utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(normalized.data()),
                       static_cast<utf8proc_ssize_t>(normalized.size()), &dst, static_cast<utf8proc_option_t>(opts));
      SX_ASSERT(len >= 0, std::string("utf8proc could not normalize valid UTF-8: ") + utf8proc_errmsg(len));
      normalized.assign(reinterpret_cast<const char*>(dst), static_cast<size_t>(len));
      std::free(dst);
    }
    text = normalized;
  }
  split_added(
      text, normalized_tokens_,
      [&](std::string_view seg) {
        Words words(*this, out);
        encode_pretokens(seg, 0, words);
        words.flush();
      },
      [&](int32_t id) { out.push_back(id); });
}

// Split `stage` (and the ones after it) over `text`; past the last, ByteLevel and the model.
void BpeTokenizer::encode_pretokens(std::string_view text, size_t stage, Words& words) const {
  if (stage < splits_.size()) {
    splits_[stage]->split(text, [&](size_t b, size_t e) { encode_pretokens(text.substr(b, e - b), stage + 1, words); });
    return;
  }
  if (add_prefix_space_ && (text.empty() || text[0] != ' ')) {  // a word of its own, not a view of the text
    words.flush();
    std::string spaced = " " + std::string(text);
    return encode_word(spaced, nullptr, words.out);
  }
  words.add(text);
}

// `key` is the word's in the cache, null when it is not to be cached.
void BpeTokenizer::encode_word(std::string_view bytes, const BpeWordCache::Key* key, std::vector<int32_t>& out) const {
  if (bytes.empty()) return;
  if (key && cache_->find(*key, out)) return;
  thread_local std::vector<int32_t> ids;  // no allocation per word
  ids.clear();
  if (ignore_merges_) {  // a word that is a token is that token, whatever the merges would make of it
    std::string mapped;
    for (unsigned char b : bytes) mapped += byte_char_[b];
    auto it = vocab_ids_.find(mapped);
    if (it != vocab_ids_.end()) ids.push_back(it->second);
  }
  if (ids.empty()) {
    for (unsigned char b : bytes) ids.push_back(byte_id_[b]);
    merge(ids);
  }
  out.insert(out.end(), ids.begin(), ids.end());
  if (key) cache_->insert(*key, ids.data(), ids.size());
}

// GPT-2's loop: merge every occurrence of the lowest-ranked pair, left to
// right, until no pair has a merge. The rank of each adjacent pair is kept
// and looked up again only where a merge changed a neighbour.
void BpeTokenizer::merge(std::vector<int32_t>& ids) const {
  constexpr int32_t kNone = INT32_MAX, kStale = -1;
  thread_local std::vector<int32_t> rank;  // rank[i]: of the pair (ids[i], ids[i + 1])
  size_t n = ids.size();
  if (n < 2) return;
  rank.resize(n);
  auto look_up = [&](size_t i) {
    const BpeMerges::Merge* m = merges_.find(ids[i], ids[i + 1]);
    rank[i] = m ? m->rank : kNone;
  };
  for (size_t i = 0; i + 1 < n; ++i) look_up(i);
  while (n > 1) {
    size_t best = 0;
    for (size_t i = 1; i + 1 < n; ++i)
      if (rank[i] < rank[best]) best = i;
    if (rank[best] == kNone) break;
    // A rank is one pair's, so `best` is the pair's leftmost occurrence.
    int32_t left = ids[best], right = ids[best + 1], merged = merges_.find(left, right)->merged;
    size_t w = best;
    for (size_t i = best; i < n; ++w) {
      if (i + 1 < n && ids[i] == left && ids[i + 1] == right) {
        ids[w] = merged, rank[w] = kStale, i += 2;
        if (w > 0) rank[w - 1] = kStale;
      } else {
        ids[w] = ids[i], rank[w] = rank[i], ++i;
      }
    }
    n = w;
    for (size_t i = best > 0 ? best - 1 : 0; i + 1 < n; ++i)
      if (rank[i] == kStale) look_up(i);
  }
  ids.resize(n);
}

}  // namespace sx::data
