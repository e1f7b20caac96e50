#pragma once
// Strided iteration over an output shape with up to four operands (the output
// and its inputs), each with its own element strides (0 where it broadcasts)
// and base offset. Dimensions of size 1 are dropped and neighbours that are
// contiguous for every operand merged, so the innermost loop is as long as
// possible: a bias add over [512, 768] becomes 512 rows of 768 with strides
// (1, 1, 0). Kernels walk rows and run a simple, vectorisable inner loop.
#include <array>
#include <cstdint>

#include "graph/shape.h"

namespace sx::cpu {

using Strides = std::array<int64_t, kMaxRank>;

// The strides of `in` broadcast to `out` (aligned on the right; 0 where in
// has 1 or lacks the dimension).
Strides broadcast_strides(const Shape& in, const Shape& out);

struct Strided {
  static constexpr int kOps = 4;
  int rank = 1;  // after collapsing, at least 1; the last dim is the inner loop
  int ops = 0;
  std::array<int64_t, kMaxRank> dims{};
  std::array<Strides, kOps> st{};
  std::array<int64_t, kOps> base{};

  // Builds and collapses; strides[k] are operand k's strides over `shape`.
  static Strided make(const Shape& shape, int ops, const Strides* strides, const int64_t* bases);
  int64_t inner() const { return dims[rank - 1]; }
  int64_t rows() const {
    int64_t r = 1;
    for (int d = 0; d + 1 < rank; ++d) r *= dims[d];
    return r;
  }
  int64_t step(int k) const { return st[k][rank - 1]; }
  // Operand k's step from a row to the next along the last outer dimension
  // (0 where there is none).
  int64_t row_step(int k) const { return rank < 2 ? 0 : st[k][rank - 2]; }
  // Operand offsets of the first element of row r.
  void row(int64_t r, int64_t* off) const {
    for (int k = 0; k < ops; ++k) off[k] = base[k];
    for (int d = rank - 2; d >= 0; --d) {
      int64_t c = r % dims[d];
      r /= dims[d];
      for (int k = 0; k < ops; ++k) off[k] += c * st[k][d];
    }
  }

  // Rows r, r + 1, ... in order: their offsets carried from one row to the
  // next, without row()'s division per dimension (which cost as much as the
  // copy of a short row: a permute's rows in a small model are 8 floats).
  struct Cursor {
    const Strided& it;
    int64_t off[kOps];
    int64_t idx[kMaxRank];
    Cursor(const Strided& s, int64_t r) : it(s) {
      it.row(r, off);
      for (int d = it.rank - 2; d >= 0; --d) idx[d] = r % it.dims[d], r /= it.dims[d];
    }
    // The rows from this one to the end of its run along the last outer
    // dimension (whose offsets step by row_step from row to row).
    int64_t run() const { return it.rank < 2 ? 1 : it.dims[it.rank - 2] - idx[it.rank - 2]; }
    // Past n <= run() rows.
    void skip(int64_t n) {
      if (it.rank >= 2 && n > 1) {
        for (int k = 0; k < it.ops; ++k) off[k] += (n - 1) * it.row_step(k);
        idx[it.rank - 2] += n - 1;
      }
      next();
    }
    void next() {
      for (int d = it.rank - 2; d >= 0; --d) {
        for (int k = 0; k < it.ops; ++k) off[k] += it.st[k][d];
        if (++idx[d] < it.dims[d]) return;
        for (int k = 0; k < it.ops; ++k) off[k] -= it.dims[d] * it.st[k][d];
        idx[d] = 0;
      }
    }
  };
};

}  // namespace sx::cpu
