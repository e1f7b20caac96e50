#pragma once
// Element types and shapes of graph tensors. A Shape holds at most kMaxRank
// dimensions inline, so a Node stays plain data; user-supplied dimension lists
// become Shapes through to_shape, which refuses rank > 8 as a user error.
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "util/source.h"

namespace sx {

constexpr int kMaxRank = 8;

// BF16 is stored and computed as f32 with values rounded to bf16 after each op.
enum class DType : uint8_t { F32, BF16, I32, Bool };
const char* dtype_name(DType d);  // "f32", "bf16", "i32", "bool"
inline bool is_float(DType d) { return d == DType::F32 || d == DType::BF16; }

struct Shape {
  int rank = 0;
  std::array<int64_t, kMaxRank> dims{};

  Shape() = default;
  Shape(std::initializer_list<int64_t> ds);  // for code and tests; asserts rank <= 8
  int64_t operator[](int d) const { return dims[d]; }
  int64_t& operator[](int d) { return dims[d]; }
  int64_t back() const { return dims[rank - 1]; }
  int64_t numel() const;
  std::vector<int64_t> vec() const { return {dims.begin(), dims.begin() + rank}; }
  bool operator==(const Shape& o) const;
  std::string str() const;  // "[8,16,32]", "[]" for a scalar
};

// Checks a dimension list given by the user: rank <= 8 (E-SHAPE-006) and
// every dimension >= 0 (E-SHAPE-004).
Shape to_shape(const std::vector<int64_t>& dims, Span at);

// NumPy broadcasting: false when some aligned pair differs and neither is 1.
bool broadcast_shapes(const Shape& a, const Shape& b, Shape* out);

// Row-major strides of a contiguous tensor of this shape.
std::array<int64_t, kMaxRank> strides(const Shape& s);

}  // namespace sx
