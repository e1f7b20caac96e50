#include "data/window_order.h"

#include "data/shuffle.h"

namespace sx::data {

int64_t WindowOrder::window(const Cursor& c) {
  if (!shuffle_) return c.index;
  if (c.epoch != cached_epoch_)
    perm_ = epoch_permutation(windows_, seed_, loader_, c.epoch), cached_epoch_ = c.epoch;
  return perm_[static_cast<size_t>(c.index)];
}

}  // namespace sx::data
