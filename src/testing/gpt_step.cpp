#include "testing/gpt_step.h"

#include "autodiff/autodiff.h"
#include "graph/precision.h"

namespace sx::cpu {

std::unique_ptr<GptStep> gpt_step(const GptShape& shape, bool bf16) {
  auto s = std::make_unique<GptStep>();
  Graph fwd;
  fwd.builtin_taps = false;
  NodeId loss = build_gpt(fwd, shape).loss;
  if (bf16) {
    std::vector<NodeId> map;
    s->g = round_products_bf16(fwd, {loss}, &map);
    loss = map[loss];
  } else {
    s->g = std::move(fwd);
  }
  Gradients grads = backward(s->g, loss);
  s->outputs.push_back(loss);
  for (const auto& [path, id] : grads.params) s->outputs.push_back(id);
  s->plan = plan::make_plan(s->g, s->outputs);
  return s;
}

}  // namespace sx::cpu
