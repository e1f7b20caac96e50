#pragma once
// A libFuzzer-friendly entry point: parses the bytes as every format — text and
// jsonl with the bytes and chars tokenizers, tokens-u16/u32 with several
// vocabularies. Bad input is a UserError, caught here; anything else is a bug.
#include <cstddef>
#include <cstdint>

namespace sx::data {
int fuzz_data_formats(const uint8_t* data, size_t size);

// The BPE tokenizer: an input whose first byte is odd is a tokenizer.json
// (the rest), parsed and, when it is one, made to encode a few texts; an even
// first byte makes the rest a text, encoded (when valid UTF-8) by small
// tokenizers built in: ByteLevel, NFKC, a Split sequence, added tokens. A
// UserError (E-DATA-050/051) is the expected answer to a bad file.
int fuzz_bpe(const uint8_t* data, size_t size);
}  // namespace sx::data
