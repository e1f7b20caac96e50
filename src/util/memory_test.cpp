// allocate_huge_pages: 2 MiB aligned, all of its rounded size ours, and the
// kernel told (smaps' VmFlags "hg" on the mapping that holds it).
#include "util/memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace sx {
namespace {

// The VmFlags of the mapping holding address p ("" where none is found).
std::string vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  auto at = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') inside = lo <= at && at < hi;
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

TEST(HugePages, AlignedOursAndAdvised) {
  constexpr size_t kHuge = kHugePageBytes;
  const size_t bytes = 5 * (size_t{1} << 20) + 3;
  char* p = static_cast<char*>(allocate_huge_pages(bytes));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kHuge, 0u);
  std::memset(p, 1, 3 * kHuge);  // rounded up to 6 MiB, every byte of it ours (ASan checks)
  EXPECT_EQ(p[3 * kHuge - 1], 1);
  if (std::filesystem::exists("/sys/kernel/mm/transparent_hugepage")) {
    std::string flags = vm_flags_of(p);
    EXPECT_NE(flags.find(" hg"), std::string::npos) << "not advised: " << flags;
  }
  std::free(p);
  void* empty = allocate_huge_pages(0);  // a size of 0 is one huge page, freeable
  EXPECT_NE(empty, nullptr);
  std::free(empty);
  EXPECT_EQ(allocate_huge_pages(SIZE_MAX), nullptr);
}

}  // namespace
}  // namespace sx
