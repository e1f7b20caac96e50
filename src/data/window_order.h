#pragma once
// Which window a training stream takes at (epoch, index): k = index without
// shuffle, else the epoch's Philox permutation (cached one epoch at a time).
#include <cstdint>
#include <string>
#include <vector>

namespace sx::data {

struct Cursor {
  int64_t epoch = 0, index = 0;
  void advance(int64_t windows) {
    if (++index == windows) ++epoch, index = 0;
  }
};

class WindowOrder {
 public:
  WindowOrder(int64_t windows, bool shuffle, uint64_t seed, std::string loader)
      : windows_(windows), shuffle_(shuffle), seed_(seed), loader_(std::move(loader)) {}
  int64_t window(const Cursor& c);
  int64_t windows() const { return windows_; }

 private:
  int64_t windows_;
  bool shuffle_;
  uint64_t seed_;
  std::string loader_;
  int64_t cached_epoch_ = -1;
  std::vector<int64_t> perm_;
};

}  // namespace sx::data
