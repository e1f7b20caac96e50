#pragma once
// A small gpt training step lowered for the cuda device, and the kernel of
// each generated launch (what the printer's tests print, run and compile).
#include <fmt/format.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "autodiff/autodiff.h"
#include "backend/cuda/kir.h"
#include "backend/cuda/lower.h"
#include "graph/precision.h"
#include "testing/gpt_graph.h"

namespace sx::cuda::test {

struct Step {
  Graph g;
  std::vector<NodeId> outputs;
  plan::Plan plan;
  Lowering lowering;
  std::vector<kir::Kernel> kernels;  // every generated launch's (and GEMM epilogues left over)
};

// `g` differentiated from `loss` (rounded for bf16 first), planned with the
// loss, every gradient and `extra` as outputs, lowered, and each generated
// launch built into a kernel.
inline std::unique_ptr<Step> lowered_step(Graph fwd, NodeId loss, bool bf16, const std::vector<NodeId>& extra = {}) {
  auto s = std::make_unique<Step>();
  std::vector<NodeId> kept = extra;
  if (bf16) {
    std::vector<NodeId> map;
    s->g = round_products_bf16(
        fwd,
        [&] {
          std::vector<NodeId> roots{loss};
          roots.insert(roots.end(), extra.begin(), extra.end());
          return roots;
        }(),
        &map);
    loss = map[loss];
    for (NodeId& e : kept) e = map[e];
  } else {
    s->g = std::move(fwd);
  }
  Gradients grads = backward(s->g, loss);
  s->outputs.push_back(loss);
  for (const auto& [path, id] : grads.params) s->outputs.push_back(id);
  s->outputs.insert(s->outputs.end(), kept.begin(), kept.end());
  s->plan = plan::make_plan(s->g, s->outputs);
  s->lowering = lower(s->g, s->plan, bf16 ? Precision::bf16 : Precision::f32);
  for (const Launch& l : s->lowering.launches) {
    if (l.kind == LaunchKind::Optimizer) continue;
    if (l.cublas()) {
      Launch rest;
      kir::build_gemms(s->g, s->plan, l, &rest);
      if (!rest.nodes.empty()) s->kernels.push_back(kir::build(s->g, s->plan, rest));
      continue;
    }
    s->kernels.push_back(kir::build(s->g, s->plan, l));
  }
  return s;
}

inline std::unique_ptr<Step> gpt_step(bool bf16, const cpu::GptShape& shape) {
  Graph fwd;
  fwd.builtin_taps = false;
  cpu::GptGraph m = cpu::build_gpt(fwd, shape);
  return lowered_step(std::move(fwd), m.loss, bf16);
}

// For the shim only: each kernel called with its arguments from an array
// (a test cannot spell every kernel's parameter list as C++ types).
inline std::string wrappers(const std::vector<kir::Kernel>& kernels) {
  std::string out;
  std::set<std::string> seen;
  for (const kir::Kernel& k : kernels) {
    if (!seen.insert(k.name).second) continue;
    std::string args;
    size_t i = 0;
    for (const kir::Buffer& b : k.buffers)
      args += fmt::format("{}({}{}*)a[{}]", i ? ", " : "", b.written ? "" : "const ",
                          b.type == kir::Type::f32    ? "float"
                          : b.type == kir::Type::bf16 ? "sx_bf16"
                                                      : "int",
                          i),
          ++i;
    // The scalars' words (gpu.h's scalar_words): one array after the buffers.
    if (!k.scalars.empty()) args += fmt::format("{}(const unsigned long long*)a[{}]", i ? ", " : "", i);
    out += fmt::format("extern \"C\" __global__ void sxtest_{}(void* const* a) {{ {}({}); }}\n", k.name, k.name, args);
  }
  return out;
}

}  // namespace sx::cuda::test
