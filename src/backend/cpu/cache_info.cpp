#include "backend/cpu/cache_info.h"

#include <cstdio>
#include <fstream>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace sx::cpu {

namespace {

constexpr CacheSizes kDefaults{32 << 10, 1 << 20, 8 << 20};

bool read_line(const std::string& path, std::string* line) {
  std::ifstream f(path);
  return static_cast<bool>(std::getline(f, *line));
}

// "32K", "1024K", "32M", "65536" (bytes) -> bytes; 0 if unreadable.
int64_t parse_size(const std::string& s) {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (...) {
    return 0;
  }
  std::string unit = s.substr(used);
  if (unit.empty()) return v;
  if (unit[0] == 'K' || unit[0] == 'k') return v << 10;
  if (unit[0] == 'M' || unit[0] == 'm') return v << 20;
  if (unit[0] == 'G' || unit[0] == 'g') return v << 30;
  return 0;
}

void take(CacheSizes& c, int level, bool data, int64_t bytes) {
  if (bytes <= 0 || !data) return;
  int64_t* slot = level == 1 ? &c.l1d : level == 2 ? &c.l2 : level == 3 ? &c.l3 : nullptr;
  if (slot && *slot == 0) *slot = bytes;
}

}  // namespace

CacheSizes read_sysfs_caches(const std::string& dir) {
  CacheSizes c;
  for (int i = 0; i < 16; ++i) {
    std::string base = dir + "/index" + std::to_string(i) + "/", level, type, size;
    if (!read_line(base + "level", &level) || !read_line(base + "type", &type) || !read_line(base + "size", &size))
      continue;
    int lv = 0;
    if (std::sscanf(level.c_str(), "%d", &lv) != 1) continue;
    take(c, lv, type == "Data" || type == "Unified", parse_size(size));
  }
  return c;
}

CacheSizes amd_legacy_caches(unsigned ecx5, unsigned ecx6, unsigned edx6) {
  CacheSizes c;
  c.l1d = static_cast<int64_t>(ecx5 >> 24) << 10;
  c.l2 = static_cast<int64_t>(ecx6 >> 16) << 10;
  c.l3 = static_cast<int64_t>(edx6 >> 18) << 19;
  return c;
}

CacheSizes read_cpuid_caches() {
  CacheSizes c;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, cx = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &cx, &d)) return c;
  bool amd = b == 0x68747541;  // "Auth"enticAMD
  unsigned max_ext = __get_cpuid_max(0x80000000, nullptr);
  unsigned leaf = 4;
  if (amd) {
    leaf = max_ext < 0x8000001D ? 0 : 0x8000001D;
  } else if (a < 4) {
    return c;
  }
  for (unsigned sub = 0; leaf != 0 && sub < 16; ++sub) {
    __cpuid_count(leaf, sub, a, b, cx, d);
    unsigned type = a & 31, level = (a >> 5) & 7;
    if (type == 0) break;
    int64_t bytes = static_cast<int64_t>((b >> 22) + 1) * (((b >> 12) & 1023) + 1) * ((b & 4095) + 1) * (cx + 1ll);
    take(c, static_cast<int>(level), type == 1 || type == 3, bytes);
  }
  // A hypervisor may zero AMD's 0x8000001D (the 2-core Zen 5 VMs measured
  // in docs/performance.md do) while it still fills the older size leaves.
  if (amd && max_ext >= 0x80000006) {
    unsigned ecx5 = 0, ecx6 = 0, edx6 = 0;
    __cpuid(0x80000005, a, b, ecx5, d);
    __cpuid(0x80000006, a, b, ecx6, edx6);
    CacheSizes legacy = amd_legacy_caches(ecx5, ecx6, edx6);
    take(c, 1, true, legacy.l1d);
    take(c, 2, true, legacy.l2);
    take(c, 3, true, legacy.l3);
  }
#endif
  return c;
}

const CacheSizes& machine_caches() {
  static const CacheSizes sizes = [] {
    CacheSizes s = read_sysfs_caches("/sys/devices/system/cpu/cpu0/cache"), id = read_cpuid_caches();
    int64_t* have[3] = {&s.l1d, &s.l2, &s.l3};
    const int64_t from_id[3] = {id.l1d, id.l2, id.l3}, fallback[3] = {kDefaults.l1d, kDefaults.l2, kDefaults.l3};
    for (int i = 0; i < 3; ++i)
      if (*have[i] <= 0) *have[i] = from_id[i] > 0 ? from_id[i] : fallback[i];
    return s;
  }();
  return sizes;
}

std::string cache_sizes_text(const CacheSizes& c) {
  auto one = [](int64_t b) {
    return b % (1 << 20) == 0 ? std::to_string(b >> 20) + "M" : std::to_string(b >> 10) + "K";
  };
  return one(c.l1d) + "/" + one(c.l2) + "/" + one(c.l3);
}

}  // namespace sx::cpu
