#pragma once
// The softmax of a contiguous row, for softmax_row (k_fused.inc) and
// run_attention, which had each written the loop. A row of at most kLanes
// floats (attention's rows in a small model: 16 keys or fewer) runs over one
// block of kLanes lanes of fixed length,
// which g++ vectorises whole, where loops of n iterations ran mostly in their
// scalar remainders. Element for element the operations of the loop
// for longer rows: the max, exp_f(x - max), the sum in sum_lanes's lanes,
// each divided by it; the lanes past n hold -inf for the
// max and 0 for the sum, which change neither. So the same bits.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "backend/cpu/lanes.h"
#include "backend/cpu/vmath.h"

namespace sx::cpu {

// What `m = -inf; for each j: m = x[j] > m ? x[j] : m` gives, up to the
// sign of a zero: the same compare in kLanes lanes (lane l over j = l mod
// kLanes), then a tree of halves (the loop was a chain of n scalar
// compares). A lane starts at -inf and skips NaNs as the loop does, so the
// tree sees no NaN. Of equal values another may win than the loop's first:
// equal floats have the same bits except +0 and -0. So for a caller that
// reads m only through x - m, exp_f and m + log(sum >= 1), which a zero's
// sign does not change (x - m is +-0 only for x = +-0, and exp_f(+-0) = 1),
// not for one that returns m.
//
// The main loop is written on two vectors of kLanes / 2 (g++'s vector
// extension, lowered to each instruction set's registers): as a loop over
// an array of kLanes, g++ kept the lanes in scalars and ran 16 scalar
// compares a block, an eighth of attention's backward by head.
//
// The tree of halves (max_tree, on lanes in memory) is on vectors of 8, 4
// and 2 lanes where the lanes are in registers (shuffles pick each level's
// halves): through the stack, scalar, attention's softmax over a medium
// model's first 64 keys cost 6.0 cycles a key, now 3.6 (a Zen 3).
[[gnu::always_inline]] inline float max_tree(float* w) {
#pragma GCC unroll 4
  for (int h = kLanes / 2; h > 0; h /= 2)
#pragma GCC unroll 8
    for (int l = 0; l < h; ++l) w[l] = w[l + h] > w[l] ? w[l + h] : w[l];
  return w[0];
}

[[gnu::always_inline]] inline float max_lanes(const float* x, int64_t n) {
  typedef float Half __attribute__((vector_size(4 * kLanes / 2)));
  typedef float Quarter __attribute__((vector_size(4 * kLanes / 4)));
  typedef float Eighth __attribute__((vector_size(4 * kLanes / 8)));
  Half w0 = Half{} - std::numeric_limits<float>::infinity(), w1 = w0;
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    Half v0, v1;
    std::memcpy(&v0, x + j, sizeof v0);
    std::memcpy(&v1, x + j + kLanes / 2, sizeof v1);
    w0 = v0 > w0 ? v0 : w0;
    w1 = v1 > w1 ? v1 : w1;
  }
  if (j < n) {  // a tail, lane by lane: the lanes are in memory, and the tree too
    float w[kLanes];
    std::memcpy(w, &w0, sizeof w0);
    std::memcpy(w + kLanes / 2, &w1, sizeof w1);
    for (int l = 0; j + l < n; ++l) w[l] = x[j + l] > w[l] ? x[j + l] : w[l];
    return max_tree(w);
  }
  // max_tree's levels: lane l < h takes lane l + h where that is larger.
  w0 = w1 > w0 ? w1 : w0;
  Quarter a = __builtin_shufflevector(w0, w0, 0, 1, 2, 3), b = __builtin_shufflevector(w0, w0, 4, 5, 6, 7);
  a = b > a ? b : a;
  Eighth c = __builtin_shufflevector(a, a, 0, 1), d = __builtin_shufflevector(a, a, 2, 3);
  c = d > c ? d : c;
  return c[1] > c[0] ? c[1] : c[0];
}

// sum_lanes(x, n, [m](float v) { return exp_f(v - m); }): the same lanes,
// each term the same exp_f(x[j] - m), added in the same order, so the same
// bits; the exponentials of a block on a GCC vector (vmath.h's exp_k), where
// through that lambda g++ had called exp_f once an element, not inlined:
// cross-entropy's forward took 2 ms of a medium step (Zen 5), a softmax
// over the same logits 0.24.
[[gnu::always_inline]] inline float sum_exp_lanes(const float* x, int64_t n, float m) {
  using F = Lanes<kLanes>::F;
  using U = Lanes<kLanes>::U;
  F acc = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    F v, e;
    std::memcpy(&v, x + j, sizeof v);
    v = v - m;
    exp_k<1, F, U>(&v, &e);
    acc = acc + e;
  }
  float a[kLanes];
  std::memcpy(a, &acc, sizeof a);
  for (int l = 0; j + l < n; ++l) a[l] += exp_f(x[j + l] - m);
  return combine(a);
}

// The softmax of kLanes lanes v in place, those from n on -inf (their
// exponentials +0, and left out of the sum: sum_lanes's first block).
// Returns the sum the exponentials were divided by.
[[gnu::always_inline]] inline float softmax_in_lanes(float* v, int64_t n) {
  float m = max_lanes(v, kLanes);
  float acc[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    v[l] = exp_f(v[l] - m);
    acc[l] = l < n ? 0.0f + v[l] : 0.0f;  // +0 plus each term
  }
  float sum = combine(acc);
  for (int l = 0; l < kLanes; ++l) v[l] = v[l] / sum;
  return sum;
}

// softmax_short of a row of kN floats, kN a constant: the lanes loaded and
// stored whole, where for n not known g++ ran a compare and a scalar move
// per lane, and a scalar division (the tiny gpt's attention rows, padded
// with -inf to 8 or 16 keys, 200 cycles a row, now 70).
template <int kN>
[[gnu::always_inline]] inline float softmax_lanes(const float* x, float* y) {
  static_assert(kN <= kLanes);
  float v[kLanes];
  for (int l = 0; l < kLanes; ++l) v[l] = l < kN ? x[l] : -std::numeric_limits<float>::infinity();
  float sum = softmax_in_lanes(v, kN);
  std::memcpy(y, v, kN * 4);
  return sum;
}

// y[j] = softmax(x[0..n))[j] for j < n <= kLanes; y may be x. Returns the
// sum the exponentials were divided by. Rows of 8 and 16 (attention's, padded
// with -inf) by softmax_lanes; others copied into lanes set to -inf and back
// (per lane, a compare and a scalar move each way had cost more).
[[gnu::always_inline]] inline float softmax_short(const float* x, float* y, int64_t n) {
  if (n == kLanes) return softmax_lanes<kLanes>(x, y);
  if (n == kLanes / 2) return softmax_lanes<kLanes / 2>(x, y);
  float v[kLanes];
  std::fill(v, v + kLanes, -std::numeric_limits<float>::infinity());
  std::memcpy(v, x, n * 4);
  float sum = softmax_in_lanes(v, n);
  std::memcpy(y, v, n * 4);
  return sum;
}

// y[j] = softmax(x[0..n))[j] for j < n; y may be x. n = 0 writes nothing.
// Returns the sum the exponentials were divided by (+0 for n = 0).
[[gnu::always_inline]] inline float softmax_row_f(const float* x, float* y, int64_t n) {
  if (n > 0 && n <= kLanes) return softmax_short(x, y, n);
  float m = max_lanes(x, n);
#pragma GCC ivdep
  for (int64_t j = 0; j < n; ++j) y[j] = exp_f(x[j] - m);
  float sum = sum_lanes(y, n);
  for (int64_t j = 0; j < n; ++j) y[j] = y[j] / sum;
  return sum;
}

// softmax_row_f on rows i < rows (x + i * ld into y + i * ld, len(i)
// floats; y may be x); with `sums`, sums[i] is what row i was divided by.
// The same operations row for row, but a step at a time over blocks of
// kSoftmaxBlock rows: row after row, each row's max, exponentials, sum and
// divisions waited on the row's step before (a chain of some 150 cycles
// that the next row's work, behind it in the loop, could not overlap), and
// rows of 64 keys ran 1.3x slower on a Zen 3.
constexpr int64_t kSoftmaxBlock = 16;

// The rows a block takes when rows are ld floats apart: kSoftmaxBlock, fewer
// where so many would not stay in cache between the steps (64 KiB: a
// vocabulary's rows of 50,000 go one at a time, as before).
constexpr int64_t softmax_block_rows(int64_t ld) {
  return std::clamp<int64_t>((int64_t{64} << 10) / std::max<int64_t>(4 * ld, 1), 1, kSoftmaxBlock);
}

template <typename Len>
[[gnu::always_inline]] inline void softmax_rows_f(const float* x, float* y, int64_t ld, int64_t rows, Len len,
                                                  float* sums = nullptr) {
  const int64_t block = softmax_block_rows(ld);
  for (int64_t b = 0; b < rows; b += block) {
    const int64_t e = std::min(rows, b + block);
    float m[kSoftmaxBlock] = {}, sum[kSoftmaxBlock];
    int64_t n[kSoftmaxBlock];
    for (int64_t i = b; i < e; ++i) {
      n[i - b] = len(i);
      if (n[i - b] <= kLanes) {  // softmax_short, done: the steps below skip it
        sum[i - b] = n[i - b] > 0 ? softmax_short(x + i * ld, y + i * ld, n[i - b]) : 0.0f;
        n[i - b] = 0;
      } else {
        m[i - b] = max_lanes(x + i * ld, n[i - b]);
      }
    }
    for (int64_t i = b; i < e; ++i) {
      const float *xi = x + i * ld, mi = m[i - b];
      float* yi = y + i * ld;
#pragma GCC ivdep
      for (int64_t j = 0; j < n[i - b]; ++j) yi[j] = exp_f(xi[j] - mi);
    }
    for (int64_t i = b; i < e; ++i)
      if (n[i - b] > 0) sum[i - b] = sum_lanes(y + i * ld, n[i - b]);
    for (int64_t i = b; i < e; ++i) {
      float* yi = y + i * ld;
      const float si = sum[i - b];
      for (int64_t j = 0; j < n[i - b]; ++j) yi[j] = yi[j] / si;
    }
    if (sums) std::copy(sum, sum + (e - b), sums + b);
  }
}

}  // namespace sx::cpu
