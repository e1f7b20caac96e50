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

constexpr size_t kCacheLimit = 1 << 20;  // words; a new corpus rarely has more distinct ones

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
      text, normalized_tokens_, [&](std::string_view seg) { encode_pretokens(seg, 0, out); },
      [&](int32_t id) { out.push_back(id); });
}

// Split `stage` (and the ones after it) over `text`; past the last, ByteLevel and the model.
void BpeTokenizer::encode_pretokens(std::string_view text, size_t stage, std::vector<int32_t>& out) const {
  if (stage < splits_.size()) {
    splits_[stage]->split(text, [&](size_t b, size_t e) { encode_pretokens(text.substr(b, e - b), stage + 1, out); });
    return;
  }
  if (add_prefix_space_ && (text.empty() || text[0] != ' ')) {
    std::string spaced = " " + std::string(text);
    return encode_word(spaced, out);
  }
  encode_word(text, out);
}

void BpeTokenizer::encode_word(std::string_view bytes, std::vector<int32_t>& out) const {
  if (bytes.empty()) return;
  std::string key(bytes);
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> ids;
  if (ignore_merges_) {  // a word that is a token is that token, whatever the merges would make of it
    std::string mapped;
    for (unsigned char b : bytes) mapped += byte_char_[b];
    auto it = vocab_ids_.find(mapped);
    if (it != vocab_ids_.end()) ids.push_back(it->second);
  }
  if (ids.empty()) {
    ids.reserve(bytes.size());
    for (unsigned char b : bytes) ids.push_back(byte_id_[b]);
    merge(ids);
  }
  out.insert(out.end(), ids.begin(), ids.end());
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (cache_.size() >= kCacheLimit) cache_.clear();
  cache_.emplace(std::move(key), std::move(ids));
}

// GPT-2's loop: merge every occurrence of the lowest-ranked pair, left to
// right, until no pair has a merge.
void BpeTokenizer::merge(std::vector<int32_t>& ids) const {
  while (ids.size() > 1) {
    int32_t best_rank = INT32_MAX, best_left = 0, best_right = 0, best_id = 0;
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
      auto it = merges_.find((uint64_t(uint32_t(ids[i])) << 32) | uint32_t(ids[i + 1]));
      if (it != merges_.end() && it->second.first < best_rank)
        best_rank = it->second.first, best_id = it->second.second, best_left = ids[i], best_right = ids[i + 1];
    }
    if (best_rank == INT32_MAX) return;
    size_t w = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i + 1 < ids.size() && ids[i] == best_left && ids[i + 1] == best_right)
        ids[w++] = best_id, ++i;
      else
        ids[w++] = ids[i];
    }
    ids.resize(w);
  }
}

}  // namespace sx::data
