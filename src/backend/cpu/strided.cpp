#include "backend/cpu/strided.h"

namespace sx::cpu {

Strides broadcast_strides(const Shape& in, const Shape& out) {
  Strides s{}, own = strides(in);
  int lead = out.rank - in.rank;
  for (int d = 0; d < out.rank; ++d) {
    int di = d - lead;
    s[d] = (di >= 0 && in[di] != 1) ? own[di] : 0;
  }
  return s;
}

Strided Strided::make(const Shape& shape, int ops, const Strides* strides, const int64_t* bases) {
  Strided it;
  it.ops = ops;
  for (int k = 0; k < ops; ++k) it.base[k] = bases ? bases[k] : 0;
  int r = 0;
  for (int d = 0; d < shape.rank; ++d) {
    if (shape[d] == 1) continue;
    bool merge = r > 0;
    for (int k = 0; merge && k < ops; ++k) merge = it.st[k][r - 1] == strides[k][d] * shape[d];
    if (merge) {
      it.dims[r - 1] *= shape[d];
      for (int k = 0; k < ops; ++k) it.st[k][r - 1] = strides[k][d];
    } else {
      it.dims[r] = shape[d];
      for (int k = 0; k < ops; ++k) it.st[k][r] = strides[k][d];
      ++r;
    }
  }
  if (r == 0) {  // a scalar, or all ones
    it.dims[0] = shape.numel();
    for (int k = 0; k < ops; ++k) it.st[k][0] = 0;
    r = 1;
  }
  it.rank = r;
  return it;
}

}  // namespace sx::cpu
