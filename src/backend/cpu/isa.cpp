#include "backend/cpu/isa.h"

#include <atomic>
#include <cstring>

namespace sx::cpu {

namespace {
Isa detect() {
#if SX_ISA_CLONES
  __builtin_cpu_init();
  // libgcc's checks include the OS's support (XCR0) for the wider registers.
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq"))
    return Isa::Avx512;
  if (__builtin_cpu_supports("avx2")) return Isa::Avx2;
#endif
  return Isa::Baseline;
}

std::atomic<int>& chosen() {
  static std::atomic<int> c{static_cast<int>(best_isa())};
  return c;
}
}  // namespace

Isa best_isa() {
  static const Isa best = detect();
  return best;
}

Isa isa() { return static_cast<Isa>(chosen().load(std::memory_order_relaxed)); }

Isa set_isa(Isa i) {
  if (static_cast<int>(i) > static_cast<int>(best_isa())) i = best_isa();
  chosen().store(static_cast<int>(i), std::memory_order_relaxed);
  return i;
}

const char* isa_name(Isa i) {
  switch (i) {
    case Isa::Avx512:
      return "avx512";
    case Isa::Avx2:
      return "avx2";
    default:
      return "baseline";
  }
}

bool find_isa(const char* name, Isa* out) {
  for (Isa i : {Isa::Baseline, Isa::Avx2, Isa::Avx512})
    if (std::strcmp(name, isa_name(i)) == 0) {
      *out = i;
      return true;
    }
  return false;
}

}  // namespace sx::cpu
