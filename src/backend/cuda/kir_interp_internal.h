#pragma once
// What the interpreter's statements (kir_interp.cpp) and intrinsics
// (kir_intrinsics.cpp) share: registers as whole arrays over their space.
#include <cstdint>
#include <vector>

#include "backend/cuda/kir_interp.h"

namespace sx::cuda::kir::detail {

// One register: numel(space) values, f32 or i32.
struct Value {
  RegType type = RegType::f32;
  std::vector<float> f;
  std::vector<int32_t> i;
  double get(int64_t k) const { return type == RegType::f32 ? static_cast<double>(f[k]) : i[k]; }
  size_t size() const { return type == RegType::f32 ? f.size() : i.size(); }
};

// For each element of space `big` (row-major), the index of the element of
// `small` it reads when `small` is broadcast to `big` (same rank, dims 1 stretch).
std::vector<int64_t> broadcast_map(const Shape& big, const Shape& small);

// The intrinsic statement `s` of kernel `k` over the registers.
void run_intrinsic(const Kernel& k, const Stmt& s, std::vector<Value>& regs, const std::vector<Scalar>& scalars);

float gelu(float x);
float gelu_grad(float x);

}  // namespace sx::cuda::kir::detail
