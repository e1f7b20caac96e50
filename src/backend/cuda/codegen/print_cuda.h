#pragma once
// The CUDA C++ printer: a kir::Kernel as one extern "C" __global__ function,
// and the kernels of a graph as few NVRTC programs.
//
// How a kernel maps onto threads: the kernel's *unit* space is its domain
// with every axis some statement folds (a reduction's, a row intrinsic's, a
// scatter's) set to 1; each thread computes whole units (a grid-stride loop
// over them), so no value crosses threads and every sum runs in the order
// kir.h defines, in one thread. Within a unit, each store evaluates its
// value where it is needed: a register is printed as a local variable at
// the outermost loop whose coordinates it depends on (computed once there),
// and reductions and row intrinsics as loops over their folded axes. A map
// is one thread per element; a row kernel one thread per row; a column
// kernel one per output element; a loss or scatter kernel one thread.
#include <string>
#include <vector>

#include "backend/cuda/kir.h"

namespace sx::cuda::codegen {

// extern "C" __global__ void <k.name>(buffers in order, then scalars).
// Needs prelude_source() before it.
std::string print_kernel(const kir::Kernel& k);

// The units of `k`: how many elements of its unit space (the grid-stride
// loop's bound). For reports and tests.
int64_t kernel_units(const kir::Kernel& k);

// A program: the prelude, then each kernel's text.
struct ProgramText {
  std::string source;
  std::vector<std::string> kernels;  // names, in the source's order
};
ProgramText print_program(const std::vector<const kir::Kernel*>& kernels);

// Kernels batched into programs of at most `per_program` kernels each (NVRTC
// compiles ~10 ms a kernel in a program against ~60 ms a program). Kernels
// of the same name and the same text are printed once; two of the same name
// whose texts differ go to different programs (the name is the structure
// hash; should it miss a difference, each launch still finds its own text).
// `program_of`, when given, receives each kernel's program index.
std::vector<ProgramText> print_programs(const std::vector<const kir::Kernel*>& kernels, size_t per_program = 64,
                                        std::vector<int>* program_of = nullptr);

}  // namespace sx::cuda::codegen
