#pragma once
// The safetensors format (an 8-byte little-endian header length, a JSON header
// of name -> dtype, shape, data_offsets, then the raw little-endian data), so
// PyTorch, NumPy and safetensors users read sexpgpu's checkpoints without it.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sx::st {

struct TensorData {
  std::vector<int64_t> shape;
  std::vector<float> values;  // F32; other float dtypes (F16, BF16, F64) are converted on reading
};

using Tensors = std::map<std::string, TensorData>;  // by name (a model path), sorted

// The bytes of a safetensors file holding `tensors` as F32, with string metadata
// in the header's "__metadata__".
std::string encode(const Tensors& tensors, const std::map<std::string, std::string>& metadata = {});

// Parses a whole file's bytes. Refuses (sx::UserError, E-CKPT-*) a truncated or
// inconsistent file — header length past the end, bad JSON, offsets out of
// bounds, overlapping or leaving gaps, a shape whose size disagrees with its
// bytes, an unknown dtype — naming `name` (the file) and what is wrong. Never
// reads out of bounds.
Tensors decode(std::string_view bytes, const std::string& name);

// The file's "__metadata__" strings (empty when none); same checks as decode.
std::map<std::string, std::string> metadata(std::string_view bytes, const std::string& name);

// Reads and decodes a file (E-CKPT-* for a missing or unreadable one).
Tensors read_file(const std::string& path);

}  // namespace sx::st
