#pragma once
// The reference kernels, one function per group of ops (ref_*.cpp), and the
// index helpers they share. Every kernel writes a fresh, contiguous `out`
// whose dtype and shape the caller set from the node.
#include <cstring>
#include <vector>

#include "backend/ref/tensor.h"
#include "graph/graph.h"
#include "util/error.h"

namespace sx::ref {

template <typename T>
using Ins = std::vector<const Tensor<T>*>;

template <typename T>
void eval_elementwise(const Node& n, const Ins<T>& in, Tensor<T>& out);
template <typename T>
void eval_reduce(const Node& n, const Ins<T>& in, Tensor<T>& out);  // and matmul
template <typename T>
void eval_shape(const Node& n, const Ins<T>& in, Tensor<T>& out);
template <typename T>
void eval_fused(const Node& n, const Ins<T>& in, Tensor<T>& out, uint64_t rng_offset);

// For each element of `out` (row-major), the offset that steps[d] per unit of
// out's dim d reaches: a strided view's elements, in out's order.
inline std::vector<int64_t> strided_index(const Shape& out, const std::array<int64_t, kMaxRank>& step) {
  std::vector<int64_t> idx(out.numel());
  std::array<int64_t, kMaxRank> c{};
  int64_t pos = 0;
  for (size_t k = 0; k < idx.size(); ++k) {
    idx[k] = pos;
    for (int d = out.rank - 1; d >= 0; --d) {
      pos += step[d];
      if (++c[d] < out[d]) break;
      pos -= step[d] * c[d];
      c[d] = 0;
    }
  }
  return idx;
}

// For each element of `out` (row-major), the element of `in` that broadcasts to it.
inline std::vector<int64_t> broadcast_index(const Shape& out, const Shape& in) {
  auto st = strides(in);
  std::array<int64_t, kMaxRank> step{};
  int lead = out.rank - in.rank;
  for (int d = 0; d < out.rank; ++d) {
    int di = d - lead;
    step[d] = (di >= 0 && in[di] != 1) ? st[di] : 0;
  }
  return strided_index(out, step);
}

// A shape split around one axis: [outer, n, inner].
struct AroundAxis {
  int64_t outer = 1, n = 1, inner = 1;
  AroundAxis(const Shape& s, int axis) {
    for (int d = 0; d < axis; ++d) outer *= s[d];
    n = s[axis];
    for (int d = axis + 1; d < s.rank; ++d) inner *= s[d];
  }
};

// out[k] = in[idx[k]] for whichever storage the dtype uses.
template <typename T>
void copy_by_index(const Tensor<T>& in, const std::vector<int64_t>& idx, Tensor<T>& out) {
  for (size_t k = 0; k < idx.size(); ++k) {
    if (is_float(out.dtype))
      out.f[k] = in.f[idx[k]];
    else
      out.i[k] = in.i[idx[k]];
  }
}

// Ids index an axis of size n: anything else is the user's data, not a bug.
inline void check_id(const Node& n, int64_t id, int64_t size, int64_t at) {
  if (id < 0 || id >= size)
    throw user_error(Code::SHAPE_012, n.span, "{}: expected ids in [0, {}), found {} (element {} of the ids)",
                     op_name(n.op), size, id, at);
}

// Round-to-nearest-even to bfloat16, kept in T: how bf16 is emulated.
template <typename T>
T round_bf16(T v) {
  float x = static_cast<float>(v);
  uint32_t b;
  std::memcpy(&b, &x, 4);
  if ((b & 0x7f800000u) == 0x7f800000u) return v;  // inf and NaN stay
  b = (b + 0x7fffu + ((b >> 16) & 1u)) & 0xffff0000u;
  std::memcpy(&x, &b, 4);
  return static_cast<T>(x);
}

}  // namespace sx::ref
