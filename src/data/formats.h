#pragma once
// Formats: how one shard's bytes become token ids — text (tokenized),
// tokens-u16 / tokens-u32 (raw little-endian ids), jsonl (a field per line).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/tokenizer.h"

namespace sx::data {

struct FormatSpec {
  std::string format = "text";           // text | tokens-u16 | tokens-u32 | jsonl
  const Tokenizer* tokenizer = nullptr;  // text and jsonl
  int64_t vocab = 0;                     // token formats: ids must be below it (<= 0: below 2^31)
  std::string field = "text";            // jsonl
};

// Appends the ids of one shard, `name` being how errors call it. Throws
// E-DATA-006/007 (text), E-DATA-008/009 (tokens), E-DATA-010 (jsonl).
void decode_shard(const FormatSpec& spec, const std::string& name, std::string_view bytes,
                  std::vector<int32_t>& out);

}  // namespace sx::data
