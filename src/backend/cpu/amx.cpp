// Whether bf16 products run on AMX's tiles (gemm.h's set_gemm_amx), and
// whether this CPU and kernel allow it.
#include <atomic>

#include "backend/cpu/gemm.h"
#include "backend/cpu/isa.h"

#if SX_ISA_CLONES
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace sx::cpu {

namespace {
std::atomic<AmxTiles>& amx_state() {
  static std::atomic<AmxTiles> state{AmxTiles::Off};
  return state;
}
}  // namespace

AmxSupport amx_support() {
#if SX_ISA_CLONES
  static const AmxSupport support = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return AmxSupport::NoAmx;
    bool tiles = (d >> 24 & 1u) != 0, bf16 = (d >> 22 & 1u) != 0;
    if (!tiles || !bf16 || best_isa() != Isa::Avx512) return AmxSupport::NoAmx;
    // The pairs are packed by AVX512-BF16's conversions, a CPUID bit of its
    // own that a hypervisor may hide while it shows AMX's.
    if (!bf16_conversion_gives_the_definition()) return AmxSupport::NoBf16Conversion;
    // Linux hands out the tiles' state only on request: ARCH_REQ_XCOMP_PERM
    // (0x1023) for XFEATURE_XTILEDATA (18), for the whole process.
    return syscall(SYS_arch_prctl, 0x1023, 18) == 0 ? AmxSupport::Available : AmxSupport::Refused;
  }();
  return support;
#else
  return AmxSupport::NoAmx;
#endif
}

AmxTiles set_gemm_amx(AmxTiles tiles) {
  if (tiles == AmxTiles::Hardware && !amx_available()) tiles = AmxTiles::Off;
  amx_state().store(tiles);
  return tiles;
}

AmxTiles gemm_amx() { return amx_state().load(); }

}  // namespace sx::cpu
