// libFuzzer target: the data decoders (text and jsonl with the bytes and chars
// tokenizers, tokens-u16/u32 with several vocabularies) over arbitrary bytes.
// A UserError (an E-DATA refusal) is the expected answer to bad input; a
// crash, a sanitizer report or a negative token id is a finding.
#include <cstddef>
#include <cstdint>

#include "data/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return sx::data::fuzz_data_formats(data, size);
}
