// libFuzzer target: the tokenizer.json reader and the BPE pre-tokenizer
// (sx::data::fuzz_bpe: the first byte chooses a file or a text). An E-DATA
// refusal is the expected answer to a bad file; a crash, a sanitizer report
// or an id outside the vocabulary is a finding.
#include <cstddef>
#include <cstdint>

#include "data/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return sx::data::fuzz_bpe(data, size); }
