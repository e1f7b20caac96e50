#pragma once
// softmax (or log-softmax) along one line: the reference backend's definition,
// which the CUDA kernel-IR interpreter calls too, so the two cannot drift.
#include <cmath>
#include <cstdint>
#include <limits>

namespace sx::ref {

// softmax or log-softmax of the n values at x[0], x[inner], ...
template <typename T>
void softmax_line(const T* x, T* y, int64_t n, int64_t inner, bool log) {
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < n; ++j) m = x[j * inner] > m ? x[j * inner] : m;
  T sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += std::exp(x[j * inner] - m);
  for (int64_t j = 0; j < n; ++j)
    y[j * inner] = log ? x[j * inner] - m - std::log(sum) : std::exp(x[j * inner] - m) / sum;
}

}  // namespace sx::ref
