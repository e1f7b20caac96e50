#pragma once
// A dense, row-major tensor of the reference backend. Float dtypes are held in
// `f` as T (float for f32 semantics, double for finite differences); i32 and
// bool in `i`, exactly, whatever T is.
#include <cstdint>
#include <vector>

#include "graph/shape.h"

namespace sx::ref {

template <typename T>
struct Tensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<T> f;
  std::vector<int32_t> i;

  static Tensor zeros(DType dtype, const Shape& shape) {
    Tensor t;
    t.dtype = dtype;
    t.shape = shape;
    if (is_float(dtype))
      t.f.assign(shape.numel(), T(0));
    else
      t.i.assign(shape.numel(), 0);
    return t;
  }
  static Tensor of(const Shape& shape, std::vector<T> values, DType dtype = DType::F32) {
    Tensor t{dtype, shape, std::move(values), {}};
    return t;
  }
  static Tensor ints(const Shape& shape, std::vector<int32_t> values, DType dtype = DType::I32) {
    Tensor t{dtype, shape, {}, std::move(values)};
    return t;
  }

  int64_t numel() const { return shape.numel(); }
  // Any element as a double: how ops that mix kinds (cast, where) read.
  double get(int64_t k) const { return is_float(dtype) ? static_cast<double>(f[k]) : i[k]; }
};

}  // namespace sx::ref
