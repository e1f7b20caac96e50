// gemm.h's blocking: each product's tiling derived from the machine's
// caches (or a test's, set_gemm_caches), and the scratch it needs.
#include <algorithm>
#include <atomic>

#include "backend/cpu/gemm.h"

namespace sx::cpu {

GemmBlocking derive_blocking(const CacheSizes& c, int mr, int nr, int64_t k, int threads) {
  GemmBlocking b;
  // op(B)'s micro-panel fills L1, not half of it (BLIS's rule): fewer k
  // blocks load and store each tile of C fewer times, and the kernel's
  // loads of op(A) from L2 keep up (on a Zen 5, KC 384 against 192: the
  // medium step's products 3-6% faster; docs/performance.md).
  int64_t kc = c.l1d / (nr * 4) / 16 * 16;
  b.kc = std::clamp<int64_t>(kc, 64, kGemmKcMax);
  // k blocks of one length (a multiple of 16): k = 256 under a KC of 192
  // ran a block of 64 steps after one of 192, whose tiles' loads and
  // stores of C cost as much as the first's.
  if (k > b.kc) {
    int64_t blocks = (k + b.kc - 1) / b.kc;
    b.kc = round_up((k + blocks - 1) / blocks, 16);
  }
  int64_t mc = c.l2 / 2 / (b.kc * 4) / mr * mr;
  b.mc = std::clamp<int64_t>(mc, mr, kGemmMcMax / mr * mr);
  // op(A) whole is read from L2 by every panel's kernels and op(B)'s panel
  // from L1, so op(A) may take more than half of L2: on a Zen 3's 512K, the
  // weight gradients of 256 rows then run this way, 1.2x faster than in row
  // blocks that each stream all of op(B) from L3 (docs/performance.md).
  int64_t whole = c.l2 * 3 / 4 / (b.kc * 4) / mr * mr;
  b.whole_rows = std::clamp<int64_t>(whole, b.mc, kGemmMcMax / mr * mr);
  int64_t slab = c.l3 / std::max(threads, 1) / 2;  // bytes of op(B) a thread keeps across its row blocks
  b.nc_panels = std::max<int64_t>(1, slab / (std::max<int64_t>(k, 1) * nr * 4));
  return b;
}

namespace {
std::atomic<const CacheSizes*>& caches_override() {
  static std::atomic<const CacheSizes*> c{nullptr};
  return c;
}
}  // namespace

void set_gemm_caches(const CacheSizes* caches) {
  static CacheSizes held[2];
  static int next = 0;
  if (!caches) {
    caches_override().store(nullptr);
    return;
  }
  held[next] = *caches;  // the previous one stays valid for a product already running
  caches_override().store(&held[next]);
  next ^= 1;
}

const CacheSizes& gemm_caches() {
  const CacheSizes* c = caches_override().load();
  return c ? *c : machine_caches();
}

int64_t gemm_thread_floats(int64_t n) {
  // op(A)'s block; op(B)'s panels of one k block (the product on one thread).
  return kGemmMcMax * kGemmARow + kGemmKcMax * round_up(std::max<int64_t>(n, 1), kGemmNrMax);
}

int64_t gemm_shared_floats(int64_t, int64_t k, int64_t n) {
  // op(B)'s panels, each of k steps (one more for a bf16 product's odd k).
  return round_up(std::max<int64_t>(k, 1), 2) * round_up(std::max<int64_t>(n, 1), kGemmNrMax);
}

// derive_blocking for a product, remembered per thread for the last few
// (caches, tile, k, threads) asked: its divisions cost as much as a small
// product's packing, and a step asks the same few over and over (attention's
// backward, head by head, alternates k = head size and k = keys).
GemmBlocking blocking_for(int mr, int nr, int64_t k, int threads) {
  struct Last {
    CacheSizes caches;
    int mr = 0, nr = 0, threads = 0;
    int64_t k = -1;
    GemmBlocking bl;
  };
  constexpr int kRemembered = 4;
  thread_local Last last[kRemembered];
  thread_local int next = 0;
  const CacheSizes& c = gemm_caches();  // compared by value: set_gemm_caches reuses its two slots
  for (const Last& l : last)
    if (c.l1d == l.caches.l1d && c.l2 == l.caches.l2 && c.l3 == l.caches.l3 && mr == l.mr && nr == l.nr && k == l.k &&
        threads == l.threads)
      return l.bl;
  last[next] = {c, mr, nr, threads, k, derive_blocking(c, mr, nr, k, threads)};
  GemmBlocking bl = last[next].bl;
  next = (next + 1) % kRemembered;
  return bl;
}
}  // namespace sx::cpu
