// libFuzzer target: the safetensors decoder over arbitrary bytes. A UserError
// (an E-CKPT refusal) is the expected answer to bad input; anything else — a
// crash, a sanitizer report, another exception — is a finding. What decodes
// must encode again and decode to the same tensors.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "checkpoint/safetensors.h"
#include "util/error.h"

namespace {

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    auto meta = sx::st::metadata(bytes, "fuzz.safetensors");
    sx::st::Tensors t = sx::st::decode(bytes, "fuzz.safetensors");
    sx::st::Tensors back = sx::st::decode(sx::st::encode(t, meta), "round-trip");
    if (back.size() != t.size()) __builtin_trap();
    for (const auto& [name, x] : t) {
      auto it = back.find(name);
      if (it == back.end() || it->second.shape != x.shape || !same_bits(it->second.values, x.values))
        __builtin_trap();
    }
    if (sx::st::metadata(sx::st::encode(t, meta), "round-trip") != meta) __builtin_trap();
  } catch (const sx::UserError& e) {
    for (const auto& d : e.diagnostics()) (void)sx::render(d);
  }
  return 0;
}
