#pragma once
// The CUDA C++ every generated program begins with, and the templates of the
// row kernels llm.c fuses. No includes and no CUDA headers (NVRTC compiles a
// source without includes in half the time): the program's own bf16 type,
// warp and block reductions in a fixed order, and GELU and the bf16 rounding
// exactly as the CPU defines them. The same text runs on the CPU under the
// SIMT shim (tests/simt) in tests.
#include <string>
#include <string_view>
#include <vector>

namespace sx::cuda::codegen {

// The helpers (sx_bf16, sx_load/sx_store, sx_warp_sum, sx_block_sum, ...).
std::string_view prelude_source();

// The row-kernel templates, as __device__ function templates over the
// element types (float or sx_bf16) and the block size; they need the prelude.
std::string_view norm_softmax_templates();    // layer/RMS norm fwd/bwd, their gain/bias sums, softmax fwd/bwd
std::string_view loss_attention_templates();  // fused cross-entropy, row means, attention fwd/bwd
std::string_view optimizer_templates();       // multi-tensor AdamW/Adam and SGD

// Prelude and every template, then one extern "C" __global__ instance of
// each template per element type (`sx_layernorm_fwd_f32`, `..._bf16`), with
// a block of 256 threads: what the tests run on the CPU and compile with
// NVRTC. `instance_names` receives the kernels' names.
std::string template_instances_source(std::vector<std::string>* instance_names = nullptr);

// The number of threads a block of the instances has.
constexpr int kRowBlock = 256;
// The longest key sequence the attention templates hold in shared memory.
constexpr int kAttentionMaxKeys = 1024;

}  // namespace sx::cuda::codegen
