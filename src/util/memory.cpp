#include "util/memory.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

namespace sx {
namespace {

std::atomic<uint64_t> g_override{0};
std::atomic<double> g_override_gib{0};

}  // namespace

uint64_t physical_memory() {
  static const uint64_t bytes = [] {
    long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return UINT64_MAX;  // unknown: only overflow is refused
    return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  }();
  return bytes;
}

void* allocate_huge_pages(size_t bytes) {
  if (bytes > SIZE_MAX - kHugePageBytes) return nullptr;
  size_t rounded = (std::max<size_t>(bytes, 1) + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  void* p = std::aligned_alloc(kHugePageBytes, rounded);
#ifdef MADV_HUGEPAGE
  if (p) ::madvise(p, rounded, MADV_HUGEPAGE);  // advice: where the kernel has none to give, 4 KiB pages
#endif
  return p;
}

uint64_t memory_budget() {
  uint64_t o = g_override.load();
  return o ? o : physical_memory();
}

std::string memory_budget_text() {
  if (g_override.load()) return fmt::format("SEXPGPU_MEMORY={} GiB", g_override_gib.load());
  uint64_t m = physical_memory();
  return m == UINT64_MAX ? "the memory" : fmt::format("this machine's {} of memory", bytes_text(m));
}

void set_memory_budget_gib(double gib) {
  g_override_gib.store(gib);
  double bytes = gib * 1024 * 1024 * 1024;  // (clamped: a cast of a double past 2^64 is undefined)
  g_override.store(gib <= 0 ? 0 : bytes >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(bytes));
}

std::string bytes_text(uint64_t b) {
  auto scaled = [&](int shift) { return static_cast<double>(b) / static_cast<double>(uint64_t{1} << shift); };
  if (b >= (uint64_t{1} << 40)) return fmt::format("{:.2f} TiB", scaled(40));
  if (b >= (uint64_t{1} << 30)) return fmt::format("{:.2f} GiB", scaled(30));
  if (b >= (uint64_t{1} << 20)) return fmt::format("{:.2f} MiB", scaled(20));
  if (b >= (uint64_t{1} << 10)) return fmt::format("{:.1f} KiB", scaled(10));
  return fmt::format("{} B", b);
}

}  // namespace sx
