#include "graph/shape.h"

#include <fmt/format.h>

#include "util/error.h"

namespace sx {

const char* dtype_name(DType d) {
  switch (d) {
    case DType::F32:
      return "f32";
    case DType::BF16:
      return "bf16";
    case DType::I32:
      return "i32";
    case DType::Bool:
      return "bool";
  }
  return "?";
}

Shape::Shape(std::initializer_list<int64_t> ds) {
  SX_ASSERT(ds.size() <= kMaxRank, "shape literal above the rank limit");
  for (int64_t d : ds) dims[rank++] = d;
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= dims[d];
  return n;
}

bool Shape::operator==(const Shape& o) const {
  if (rank != o.rank) return false;
  for (int d = 0; d < rank; ++d)
    if (dims[d] != o.dims[d]) return false;
  return true;
}

std::string Shape::str() const { return fmt::format("[{}]", fmt::join(vec(), ",")); }

Shape to_shape(const std::vector<int64_t>& dims, Span at) {
  if (dims.size() > kMaxRank)
    throw UserError(Code::SHAPE_006, at,
                    fmt::format("expected a tensor of rank at most {}, found rank {} [{}]", kMaxRank,
                                dims.size(), fmt::join(dims, ",")),
                    "merge dimensions with reshape");
  Shape s;
  for (int64_t d : dims) {
    if (d < 0)
      throw UserError(Code::SHAPE_004, at,
                      fmt::format("expected dimensions >= 0, found [{}]", fmt::join(dims, ",")));
    s.dims[s.rank++] = d;
  }
  return s;
}

bool broadcast_shapes(const Shape& a, const Shape& b, Shape* out) {
  Shape r;
  r.rank = std::max(a.rank, b.rank);
  for (int d = 0; d < r.rank; ++d) {
    int da = d - (r.rank - a.rank), db = d - (r.rank - b.rank);
    int64_t x = da >= 0 ? a[da] : 1, y = db >= 0 ? b[db] : 1;
    if (x != y && x != 1 && y != 1) return false;
    r[d] = x == 1 ? y : x;
  }
  *out = r;
  return true;
}

std::array<int64_t, kMaxRank> strides(const Shape& s) {
  std::array<int64_t, kMaxRank> st{};
  int64_t n = 1;
  for (int d = s.rank - 1; d >= 0; --d) {
    st[d] = n;
    n *= s[d];
  }
  return st;
}

}  // namespace sx
