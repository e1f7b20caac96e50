// fuzz_bpe (fuzz.h): the tokenizer.json reader and the pre-tokenizer.
#include <array>
#include <nlohmann/json.hpp>
#include <string_view>

#include "data/bpe.h"
#include "data/fuzz.h"
#include "util/error.h"
#include "util/utf8.h"

namespace sx::data {
namespace {

// Every byte in GPT-2's byte-to-character map, a few merges, and `extra` on top.
nlohmann::json small_tokenizer(nlohmann::json normalizer, nlohmann::json pre_tokenizer) {
  nlohmann::json vocab = nlohmann::json::object();
  int next = 0, id = 0;
  std::string chars[256];
  for (int b = 0; b < 256; ++b) {
    bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    append_utf8(chars[b], printable ? char32_t(b) : char32_t(0x100 + next++));
    vocab[chars[b]] = id++;
  }
  nlohmann::json merges = nlohmann::json::array();
  for (auto [a, b] : {std::pair{chars[' '], std::string("a")},
                      {"t", "h"},
                      {"th", "e"},
                      {chars[' '], "the"},
                      {"e", "r"},
                      {chars[0xE4], chars[0xB8]}}) {
    vocab[a + b] = id++;
    merges.push_back(a + " " + b);
  }
  nlohmann::json added = nlohmann::json::array();
  for (const char* t : {"<|endoftext|>", "<|x|>", "\u00e9t\u00e9"})
    added.push_back({{"id", id++}, {"content", t}, {"special", true}, {"normalized", t[0] != '<'}});
  return {{"normalizer", normalizer},
          {"pre_tokenizer", pre_tokenizer},
          {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}},
          {"added_tokens", added}};
}

// Each built-in tokenizer twice: the fast ways, then the plain ones (bpe.h).
const std::vector<std::shared_ptr<const BpeTokenizer>>& built_in(bool plain) {
  static const auto all = [] {
    nlohmann::json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
    nlohmann::json prefixed = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}};
    nlohmann::json split = {
        {"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"},
           {"pattern",
            {{"Regex",
              R"((?i:'s|'t|'re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}}},
           {"behavior", "Isolated"}},
          {{"type", "Split"}, {"pattern", {{"String", "e"}}}, {"behavior", "Isolated"}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
    nlohmann::json nfkc = {{"type", "NFKC"}};
    nlohmann::json both = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}, {{"type", "NFKC"}}}}};
    std::vector<std::shared_ptr<const BpeTokenizer>> out[2];
    for (bool plain : {false, true})
      for (const auto& [norm, pre] : {std::pair{nlohmann::json(nullptr), byte_level}, {nfkc, prefixed}, {both, split}})
        out[plain].push_back(BpeTokenizer::parse(small_tokenizer(norm, pre).dump(), "built-in", plain));
    return std::array{out[0], out[1]};
  }();
  return all[plain];
}

std::vector<int32_t> encode_checked(const BpeTokenizer& t, std::string_view text) {
  std::vector<int32_t> ids;
  t.encode(text, ids);
  for (int32_t id : ids) SX_ASSERT(id >= 0 && id < t.vocab(), "an id outside the vocabulary");
  SX_ASSERT(!text.empty() || ids.empty(), "ids for an empty text");
  return ids;
}

}  // namespace

int fuzz_bpe(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    std::shared_ptr<const BpeTokenizer> t;
    try {
      t = BpeTokenizer::parse(rest, "fuzz.json");
    } catch (const UserError&) {
      return 0;
    }
    for (std::string_view text :
         {"Hello, world! It's 2024.", "  \n\t a\u00a0b \u00e9t\u00e9 <|endoftext|>", "\xf0\x9f\x98\x80 \u4e2d\u6587"}) {
      try {
        encode_checked(*t, text);
      } catch (const UserError&) {  // a pattern that backtracks past PCRE2's match limit
      }
    }
    return 0;
  }
  if (invalid_utf8_at(rest) != std::string_view::npos) return 0;  // the caller's check (E-DATA-007)
  for (size_t i = 0; i < built_in(false).size(); ++i) {
    try {
      std::vector<int32_t> fast = encode_checked(*built_in(false)[i], rest);
      SX_ASSERT(fast == encode_checked(*built_in(true)[i], rest), "the fast ways' ids differ from the plain ones'");
    } catch (const UserError&) {
    }
  }
  return 0;
}

}  // namespace sx::data
