#pragma once
// The safetensors format (an 8-byte little-endian header length, a JSON header
// of name -> dtype, shape, data_offsets, then the raw little-endian data), so
// PyTorch, NumPy and safetensors users read sexpgpu's checkpoints without it.
#include <cstddef>
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

// ---- Lower level: the header alone, for readers that report per tensor ----

// One header entry. Offsets are relative to the data section.
struct Entry {
  std::string dtype;  // as in the file: "F32", "BF16", "I64", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

struct Header {
  std::map<std::string, Entry> entries;  // by name, without "__metadata__"
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;  // where the data section begins in the file's bytes
};

// Parses and checks the header (every check of decode except that dtypes be
// float: a known integer dtype is accepted here). E-CKPT-002..006.
Header parse_header(std::string_view bytes, const std::string& name);

// The bytes one element of a safetensors dtype takes; 0 for an unknown dtype.
size_t dtype_size(std::string_view dtype);
// F32, F16, BF16, F64: the dtypes read as float32 values.
bool is_float_dtype(std::string_view dtype);

// One entry's values as float32 (E-CKPT-006 for a non-float dtype). `bytes`
// and `header` must come from the same parse_header call.
TensorData read_tensor(std::string_view bytes, const Header& header, const std::string& tensor,
                       const std::string& name);

// A whole file's bytes (E-CKPT-001 for a missing, unreadable or directory path).
std::string read_bytes(const std::string& path);

}  // namespace sx::st
