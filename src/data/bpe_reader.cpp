// Reading a tokenizer.json into a BpeTokenizer: every component checked,
// every unsupported one refused by name.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "data/bpe.h"
#include "data/bpe_regex.h"
#include "util/error.h"
#include "util/sha256.h"
#include "util/utf8.h"

namespace sx::data {

const char* const kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

using nlohmann::json;

class BpeReader {
 public:
  BpeReader(BpeTokenizer& t, std::string name) : t_(t), name_(std::move(name)) {}

  void read(const json& j) {
    if (!j.is_object()) throw bad(fmt::format("expected a JSON object, found {}", j.type_name()));
    normalizer(field(j, "normalizer"));
    pre_tokenizer(field(j, "pre_tokenizer"));
    model(field(j, "model"));
    added_tokens(field(j, "added_tokens"));
  }

 private:
  UserError bad(const std::string& what) const {
    return UserError(Code::DATA_050, {}, fmt::format("tokenizer file {}: {}", name_, what),
                     "give the tokenizer.json that Hugging Face's tokenizers library saved (tokenizer.save)");
  }
  UserError unsupported(const std::string& what) const {
    return UserError(Code::DATA_051, {}, fmt::format("tokenizer file {}: {} is not supported", name_, what),
                     "sexpgpu reads byte-level BPE tokenizers (GPT-2 style): ByteLevel or "
                     "Sequence[Split, ByteLevel] pre-tokenizers, NFC/NFKC normalizers; pre-tokenize other data "
                     "into tokens-u16 or tokens-u32");
  }
  static json field(const json& j, const char* key) {
    auto it = j.find(key);
    return it == j.end() ? json() : *it;
  }
  std::string type_of(const json& j, const std::string& what) const {
    if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
      throw bad(fmt::format("{} is not an object with a \"type\" string", what));
    return j["type"].get<std::string>();
  }
  bool flag(const json& j, const char* key, bool otherwise, const std::string& what) const {
    json v = field(j, key);
    if (v.is_null()) return otherwise;
    if (!v.is_boolean()) throw bad(fmt::format("{}'s \"{}\" is {}, not true or false", what, key, v.type_name()));
    return v.get<bool>();
  }

  void normalizer(const json& n) {
    if (n.is_null()) return;
    std::string type = type_of(n, "the normalizer");
    if (type == "Sequence") {
      json list = field(n, "normalizers");
      if (!list.is_array()) throw bad("the Sequence normalizer has no \"normalizers\" array");
      for (const json& m : list) normalizer(m);
    } else if (type == "NFC") {
      t_.normalizers_.push_back(BpeTokenizer::Norm::nfc);
    } else if (type == "NFKC") {
      t_.normalizers_.push_back(BpeTokenizer::Norm::nfkc);
    } else {
      throw unsupported(fmt::format("the {} normalizer", type));
    }
  }

  void byte_level(const json& p, bool last) {
    if (!last) throw unsupported("a ByteLevel pre-tokenizer before another pre-tokenizer");
    t_.add_prefix_space_ = flag(p, "add_prefix_space", true, "ByteLevel");
    if (flag(p, "use_regex", true, "ByteLevel"))
      t_.splits_.push_back(std::make_unique<BpeRegex>(kGpt2Pattern, false, name_, !t_.plain_));
    byte_level_ = true;
  }

  void split(const json& p) {
    json pat = field(p, "pattern"), behavior = field(p, "behavior");
    if (behavior != "Isolated")
      throw unsupported(fmt::format("a Split pre-tokenizer with behavior {}", behavior.dump()));
    if (flag(p, "invert", false, "Split")) throw unsupported("a Split pre-tokenizer with invert true");
    bool literal = pat.is_object() && pat.contains("String") && pat["String"].is_string();
    if (!literal && !(pat.is_object() && pat.contains("Regex") && pat["Regex"].is_string()))
      throw bad("a Split pre-tokenizer's \"pattern\" is not {\"Regex\": \"...\"} or {\"String\": \"...\"}");
    t_.splits_.push_back(
        std::make_unique<BpeRegex>(pat[literal ? "String" : "Regex"].get<std::string>(), literal, name_, !t_.plain_));
  }

  void pre_tokenizer(const json& p) {
    if (p.is_null()) throw unsupported("a tokenizer without a pre-tokenizer (a byte-level BPE needs ByteLevel)");
    std::string type = type_of(p, "the pre-tokenizer");
    if (type == "ByteLevel") {
      byte_level(p, true);
    } else if (type == "Sequence") {
      json list = field(p, "pretokenizers");
      if (!list.is_array()) throw bad("the Sequence pre-tokenizer has no \"pretokenizers\" array");
      for (size_t i = 0; i < list.size(); ++i) {
        std::string t = type_of(list[i], fmt::format("pre-tokenizer {} of the Sequence", i));
        if (t == "ByteLevel")
          byte_level(list[i], i + 1 == list.size());
        else if (t == "Split")
          split(list[i]);
        else
          throw unsupported(fmt::format("the {} pre-tokenizer", t));
      }
    } else {
      throw unsupported(fmt::format("the {} pre-tokenizer", type));
    }
    if (!byte_level_) throw unsupported("a pre-tokenizer Sequence that does not end with ByteLevel");
  }

  void model(const json& m) {
    if (m.is_null()) throw bad("it has no \"model\"");
    std::string type = m.contains("type") ? type_of(m, "the model") : "BPE";
    if (type != "BPE") throw unsupported(fmt::format("the {} model", type));
    json dropout = field(m, "dropout");
    if (!dropout.is_null() && !(dropout.is_number() && dropout.get<double>() == 0.0)) throw unsupported("BPE dropout");
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
      json v = field(m, key);
      if (!v.is_null() && v != "") throw unsupported(fmt::format("a BPE {} ({})", key, v.dump()));
    }
    if (flag(m, "byte_fallback", false, "the model")) throw unsupported("BPE byte_fallback");
    t_.ignore_merges_ = flag(m, "ignore_merges", false, "the model");

    json vocab = field(m, "vocab");
    if (!vocab.is_object()) throw bad("the model has no \"vocab\" object");
    for (auto it = vocab.begin(); it != vocab.end(); ++it) {
      if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 ||
          it.value().get<int64_t>() >= (int64_t{1} << 31))
        throw bad(fmt::format("vocab entry {} has id {}, not an integer in [0, 2^31)", json(it.key()).dump(),
                              it.value().dump()));
      int32_t id = static_cast<int32_t>(it.value().get<int64_t>());
      t_.vocab_ids_[it.key()] = id;
      t_.vocab_ = std::max<int64_t>(t_.vocab_, int64_t{id} + 1);
    }
    byte_map();
    merges(field(m, "merges"));
  }

  // GPT-2's map: the printable bytes stand for themselves, the others for U+0100 + n in byte order.
  void byte_map() {
    int next = 0;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      std::string c;
      append_utf8(c, printable ? char32_t(b) : char32_t(0x100 + next++));
      auto it = t_.vocab_ids_.find(c);
      if (it == t_.vocab_ids_.end())
        throw bad(fmt::format("the vocab has no token for byte 0x{:02X} (\"{}\"): not a byte-level BPE", b, c));
      t_.byte_char_[b] = c, t_.byte_id_[b] = it->second;
    }
  }

  int32_t id_of(const std::string& s, size_t i) const {
    auto it = t_.vocab_ids_.find(s);
    if (it == t_.vocab_ids_.end())
      throw bad(fmt::format("merge {} uses {}, which is not in the vocab", i, json(s).dump()));
    return it->second;
  }

  void merges(const json& list) {
    if (!list.is_array()) throw bad("the model has no \"merges\" array");
    t_.merges_.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
      const json& m = list[i];
      std::string a, b;
      if (m.is_string()) {
        const std::string& s = m.get_ref<const std::string&>();
        size_t sp = s.find(' ');
        if (sp == std::string::npos || sp == 0 || sp + 1 == s.size() || s.find(' ', sp + 1) != std::string::npos)
          throw bad(fmt::format("merge {} is {}, not two tokens separated by one space", i, m.dump()));
        a = s.substr(0, sp), b = s.substr(sp + 1);
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        a = m[0].get<std::string>(), b = m[1].get<std::string>();
      } else {
        throw bad(fmt::format("merge {} is {}, not \"a b\" or [\"a\", \"b\"]", i, m.dump().substr(0, 80)));
      }
      int32_t left = id_of(a, i), right = id_of(b, i), merged = id_of(a + b, i);
      t_.merges_.add(left, right, static_cast<int32_t>(i), merged);
    }
  }

  void added_tokens(const json& list) {
    if (list.is_null()) return;
    if (!list.is_array()) throw bad("\"added_tokens\" is not an array");
    for (const json& a : list) {
      if (!a.is_object() || !a.contains("content") || !a["content"].is_string() || !a.contains("id") ||
          !a["id"].is_number_integer() || a["id"].get<int64_t>() < 0 || a["id"].get<int64_t>() >= (int64_t{1} << 31))
        throw bad("an added token is not an object with a \"content\" string and an \"id\" in [0, 2^31)");
      std::string content = a["content"].get<std::string>();
      if (content.empty()) throw bad("an added token has empty \"content\"");
      if (invalid_utf8_at(content) != std::string::npos) throw bad("an added token's content is not valid UTF-8");
      for (const char* key : {"single_word", "lstrip", "rstrip"})
        if (flag(a, key, false, "added token " + json(content).dump()))
          throw unsupported(fmt::format("the added token {} with {} true", json(content).dump(), key));
      BpeAddedToken t{content, static_cast<int32_t>(a["id"].get<int64_t>()),
                      flag(a, "normalized", !flag(a, "special", false, "an added token"), "an added token")};
      t_.vocab_ = std::max<int64_t>(t_.vocab_, int64_t{t.id} + 1);
      (t.normalized && !t_.normalizers_.empty() ? t_.normalized_tokens_ : t_.raw_tokens_).push_back(std::move(t));
    }
    // Longest first, so that the first that matches at a position is the longest there.
    for (auto* v : {&t_.raw_tokens_, &t_.normalized_tokens_})
      std::stable_sort(v->begin(), v->end(), [](const BpeAddedToken& x, const BpeAddedToken& y) {
        return x.content.size() > y.content.size();
      });
  }

  BpeTokenizer& t_;
  std::string name_;
  bool byte_level_ = false;
};

std::shared_ptr<const BpeTokenizer> BpeTokenizer::parse(std::string_view text, const std::string& name, bool plain) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded())
    throw UserError(Code::DATA_050, {}, fmt::format("tokenizer file {} is not valid JSON", name),
                    "give the tokenizer.json that Hugging Face's tokenizers library saved (tokenizer.save)");
  std::shared_ptr<BpeTokenizer> t(new BpeTokenizer());
  t->plain_ = plain;
  if (!plain) t->cache_ = std::make_unique<BpeWordCache>();
  BpeReader(*t, name).read(j);
  t->fingerprint_ = sha256_hex(text);
  return t;
}

}  // namespace sx::data
