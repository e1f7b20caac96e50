#pragma once
// Our own kernels (elementwise, row-wise fused ops, reductions, attention's
// loops) are compiled three times: for baseline x86-64, for AVX2 and for
// AVX-512, and the widest the CPU supports is chosen once, at run time. All
// three do the same IEEE operations element by element in the same order
// (the kernel files are compiled with fp-contract=off, so no fused
// multiply-adds, and reductions add in explicit lanes, lanes.h): results are
// bit-identical whichever runs. sx_backend_cpu_tests checks it.
//
// A cloned kernel file X.cpp includes its body X.inc once per instruction
// set, each time inside namespace sx::cpu::<isa> (the SX_ISA macro) under
// that set's `#pragma GCC target` (`#define SX_ISA_BODY "backend/cpu/X.inc"`,
// then `#include "backend/cpu/isa_clones.inc"`), and defines the entry point
// declared in kernels.h as a dispatch on isa().

namespace sx::cpu {

enum class Isa { Baseline = 0, Avx2 = 1, Avx512 = 2 };

// The widest instruction set this CPU (and its OS) supports among ours.
Isa best_isa();
// The one the kernels use: best_isa() unless set_isa chose a narrower one.
Isa isa();
// For tests and benchmarks: use `i` (capped at best_isa()); returns what is used.
Isa set_isa(Isa i);
const char* isa_name(Isa i);
// The set isa_name calls `name`, for the benchmarks' knobs; false if none.
bool find_isa(const char* name, Isa* out);

}  // namespace sx::cpu

#if defined(__x86_64__) || defined(__i386__)
#define SX_ISA_CLONES 1
#define SX_DISPATCH(fn, ...)            \
  switch (::sx::cpu::isa()) {           \
    case ::sx::cpu::Isa::Avx512:        \
      return avx512::fn(__VA_ARGS__);   \
    case ::sx::cpu::Isa::Avx2:          \
      return avx2::fn(__VA_ARGS__);     \
    default:                            \
      return baseline::fn(__VA_ARGS__); \
  }
#else  // one build for other architectures
#define SX_ISA_CLONES 0
#define SX_DISPATCH(fn, ...) return baseline::fn(__VA_ARGS__);
#endif

// Around the second and third inclusion of a kernel body.
#define SX_TARGET_AVX2_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx2\")")
#define SX_TARGET_AVX512_BEGIN \
  _Pragma("GCC push_options") _Pragma("GCC target(\"avx2,avx512f,avx512vl,avx512bw,avx512dq\")")
#define SX_TARGET_END _Pragma("GCC pop_options")
