#include "plan/pack.h"

#include <algorithm>
#include <climits>

#include "util/interrupted.h"

namespace sx::plan {
namespace {

std::vector<size_t> placement_order(const std::vector<Buffer>& b) {
  std::vector<size_t> order(b.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if (b[x].bytes != b[y].bytes) return b[x].bytes > b[y].bytes;
    if (b[x].first != b[y].first) return b[x].first < b[y].first;
    return x < y;
  });
  return order;
}

// The best-fit choice over the offset ranges of the overlapping placed
// buffers, sorted: the smallest gap that holds `bytes` (the first of equal
// ones), else the top of them all.
int64_t best_fit(std::vector<std::pair<int64_t, int64_t>>& busy, int64_t bytes) {
  std::sort(busy.begin(), busy.end());
  int64_t best = -1, best_gap = INT64_MAX, cursor = 0;
  for (auto [lo, hi] : busy) {
    int64_t gap = lo - cursor;
    if (gap >= bytes && gap < best_gap) best = cursor, best_gap = gap;
    cursor = std::max(cursor, hi);
  }
  return best >= 0 ? best : cursor;
}

// Disjoint offset ranges [lo, hi), merged when they touch or overlap. For a
// buffer of more than zero bytes only the union of the busy ranges decides
// best_fit's answer, so a union stands for all the ranges it merged.
class RangeUnion {
 public:
  void add(int64_t lo, int64_t hi) {
    // The first range that ends at or after lo, through the last that starts at or before hi, merge.
    auto first = std::lower_bound(ranges_.begin(), ranges_.end(), lo,
                                  [](const std::pair<int64_t, int64_t>& r, int64_t v) { return r.second < v; });
    auto last = first;
    while (last != ranges_.end() && last->first <= hi) {
      lo = std::min(lo, last->first), hi = std::max(hi, last->second);
      ++last;
    }
    if (first == last) {
      ranges_.insert(first, {lo, hi});
      return;
    }
    *first = {lo, hi};
    ranges_.erase(first + 1, last);
  }
  const std::vector<std::pair<int64_t, int64_t>>& ranges() const { return ranges_; }

 private:
  std::vector<std::pair<int64_t, int64_t>> ranges_;  // sorted, disjoint, not touching
};

// A segment tree over schedule positions. A placed buffer is stored at the
// nodes that tile its lifetime (own) and in the union of every node on the
// way there (below). The buffers overlapping a lifetime are then exactly those
// below the nodes tiling it, and those owned by the nodes above them.
class TimeTree {
 public:
  explicit TimeTree(int32_t positions) : n_(std::max(positions, 1)), own_(4 * n_), below_(4 * n_) {}
  void place(int32_t first, int32_t last, int64_t lo, int64_t hi) { place(1, 0, n_ - 1, first, last, lo, hi); }
  using Ranges = std::vector<std::pair<int64_t, int64_t>>;
  // The sorted lists whose union is the offset ranges busy during [first, last].
  void busy(int32_t first, int32_t last, std::vector<const Ranges*>& out) const {
    busy(1, 0, n_ - 1, first, last, out);
  }

 private:
  void place(size_t v, int32_t l, int32_t r, int32_t a, int32_t b, int64_t lo, int64_t hi) {
    if (b < l || r < a) return;
    below_[v].add(lo, hi);
    if (a <= l && r <= b) {
      own_[v].add(lo, hi);
      return;
    }
    int32_t m = l + (r - l) / 2;
    place(2 * v, l, m, a, b, lo, hi);
    place(2 * v + 1, m + 1, r, a, b, lo, hi);
  }
  void busy(size_t v, int32_t l, int32_t r, int32_t a, int32_t b, std::vector<const Ranges*>& out) const {
    if (b < l || r < a) return;
    if (a <= l && r <= b) {
      if (!below_[v].ranges().empty()) out.push_back(&below_[v].ranges());
      return;
    }
    if (!own_[v].ranges().empty()) out.push_back(&own_[v].ranges());
    int32_t m = l + (r - l) / 2;
    busy(2 * v, l, m, a, b, out);
    busy(2 * v + 1, m + 1, r, a, b, out);
  }

  int32_t n_;
  std::vector<RangeUnion> own_, below_;
};

}  // namespace

int64_t pack_buffers_reference(const std::vector<Buffer>& b, std::vector<int64_t>& offsets) {
  offsets.assign(b.size(), -1);
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> busy;
  int64_t arena = 0;
  for (size_t i : placement_order(b)) {
    busy.clear();
    for (size_t o : placed)
      if (b[o].first <= b[i].last && b[i].first <= b[o].last) busy.push_back({offsets[o], offsets[o] + b[o].bytes});
    offsets[i] = best_fit(busy, b[i].bytes);
    arena = std::max(arena, offsets[i] + b[i].bytes);
    placed.push_back(i);
  }
  return arena;
}

int64_t pack_buffers(const std::vector<Buffer>& b, std::vector<int64_t>& offsets, const std::atomic<bool>* stop) {
  // An empty buffer can sit at a gap of zero bytes, which a union of ranges
  // does not keep: such plans (a dimension of 0) take the direct way.
  int32_t positions = 0;
  for (const Buffer& x : b) {
    if (x.bytes <= 0) return pack_buffers_reference(b, offsets);
    positions = std::max(positions, x.last + 1);
  }
  offsets.assign(b.size(), -1);
  TimeTree tree(positions);
  std::vector<const TimeTree::Ranges*> lists;
  std::vector<std::pair<int64_t, int64_t>> busy;
  int64_t arena = 0;
  size_t placed = 0;
  for (size_t i : placement_order(b)) {
    if (++placed % 256 == 0) poll_stop(stop);
    lists.clear(), busy.clear();
    tree.busy(b[i].first, b[i].last, lists);
    for (const auto* l : lists) busy.insert(busy.end(), l->begin(), l->end());
    offsets[i] = best_fit(busy, b[i].bytes);
    tree.place(b[i].first, b[i].last, offsets[i], offsets[i] + b[i].bytes);
    arena = std::max(arena, offsets[i] + b[i].bytes);
  }
  return arena;
}

}  // namespace sx::plan
