#include "data/fuzz.h"

#include <string_view>

#include "data/formats.h"
#include "util/error.h"

namespace sx::data {
namespace {

TokenizerSpec chars_spec(bool unknown) {
  TokenizerSpec t;
  t.kind = "chars";
  t.alphabet = "abcdefghijklmnopqrstuvwxyz .,;\n!é\"{}:";
  if (unknown) t.unknown = "?";
  if (unknown) t.alphabet += "?";
  return t;
}

}  // namespace

int fuzz_data_formats(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  TokenizerSpec bytes_spec;
  bytes_spec.kind = "bytes";
  const Tokenizer tokenizers[] = {Tokenizer(bytes_spec), Tokenizer(chars_spec(false)),
                                  Tokenizer(chars_spec(true))};
  std::vector<FormatSpec> specs;
  for (const char* format : {"text", "jsonl"})
    for (const Tokenizer& t : tokenizers) specs.push_back({format, &t, 0, "text"});
  for (int64_t vocab : {0, 256, 50257}) {
    specs.push_back({"tokens-u16", nullptr, vocab, ""});
    specs.push_back({"tokens-u32", nullptr, vocab, ""});
  }
  for (const FormatSpec& spec : specs) {
    std::vector<int32_t> out;
    try {
      decode_shard(spec, "fuzz", bytes, out);
    } catch (const UserError&) {
    }
    for (int32_t id : out) SX_ASSERT(id >= 0, "a negative token id");
  }
  return 0;
}

}  // namespace sx::data
