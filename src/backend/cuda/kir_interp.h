#pragma once
// The kernel IR's interpreter: the one CPU definition of every statement,
// run statement by statement over whole spaces (kir.h). What the emulated
// GPU runs for each launch; the numbers are the reference backend's for
// the same ops (the same formulas in f32, reductions in the same order).
#include <vector>

#include "backend/cuda/gpu.h"
#include "backend/cuda/kir.h"

namespace sx::cuda::kir {

// Runs `k` once over its buffers (host addresses, one per Kernel::buffers,
// as big as each buffer's shape at its type) and its scalars. An id out of
// range is the user error E-SHAPE-012 at the statement's span.
void interpret(const Kernel& k, const std::vector<void*>& buffers, const std::vector<Scalar>& scalars);

// The optimizer kernel (Kind Optimizer), runtime/optimizer.cpp's arithmetic.
void interpret_optimizer(const Kernel& k, const std::vector<void*>& buffers, const std::vector<Scalar>& scalars);

// Round to nearest even to bfloat16 (inf and NaN kept), as the graph's round-bf16.
float round_bf16(float x);
uint16_t to_bf16_bits(float x);
float from_bf16_bits(uint16_t b);

}  // namespace sx::cuda::kir
