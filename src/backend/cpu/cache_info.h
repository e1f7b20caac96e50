#pragma once
// The data caches of the machine, for the matrix product's blocking
// (gemm.h): read once from sysfs (/sys/devices/system/cpu/cpu0/cache), else
// from cpuid (leaf 4 on Intel, 0x8000001D or the older 0x80000005/6 on
// AMD), else safe defaults. The
// sizes decide only how a product is tiled, never the order of its
// additions, so they change its speed and not one bit of its result.
#include <cstdint>
#include <string>

namespace sx::cpu {

// Bytes per core's L1 data and L2 caches, and the whole L3 (0: none found).
struct CacheSizes {
  int64_t l1d = 0, l2 = 0, l3 = 0;
};

// What the sysfs folder `dir` (one cpu's `cache`, with index*/level, type,
// size) describes; 0 for a level it does not describe.
CacheSizes read_sysfs_caches(const std::string& dir);
// What cpuid's deterministic cache parameters describe (leaf 4 on Intel,
// 0x8000001D on AMD), on AMD with the levels those leave out taken from
// the older size leaves (amd_legacy_caches); 0s off x86.
CacheSizes read_cpuid_caches();
// AMD's 0x80000005 ECX (L1 data KiB in bits 31:24) and 0x80000006 ECX (L2
// KiB in 31:16) and EDX (L3 in 512 KiB units in 31:18), decoded.
CacheSizes amd_legacy_caches(unsigned ecx5, unsigned ecx6, unsigned edx6);
// sysfs, then cpuid, for each level; a level neither gives takes the
// default (32 KiB, 1 MiB, 8 MiB). Read once.
const CacheSizes& machine_caches();
// "32K/1M/32M": the sizes as sysfs writes them.
std::string cache_sizes_text(const CacheSizes& c);

}  // namespace sx::cpu
