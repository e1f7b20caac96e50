#pragma once
// A libFuzzer-friendly entry point: parses the bytes as every format — text and
// jsonl with the bytes and chars tokenizers, tokens-u16/u32 with several
// vocabularies. Bad input is a UserError, caught here; anything else is a bug.
#include <cstddef>
#include <cstdint>

namespace sx::data {
int fuzz_data_formats(const uint8_t* data, size_t size);
}  // namespace sx::data
