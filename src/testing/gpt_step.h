#pragma once
// A gpt training step as the lowering sees it: the forward graph of
// gpt_graph.h, rounded for `:precision bf16` first when asked, differentiated
// from its loss, and planned with the loss and every parameter's gradient as
// outputs (the lowering's and the kernel IR's tests start from it).
#include <memory>
#include <vector>

#include "plan/plan.h"
#include "testing/gpt_graph.h"

namespace sx::cpu {

struct GptStep {
  Graph g;
  std::vector<NodeId> outputs;  // the loss, then each parameter's gradient in model-path order
  plan::Plan plan;
};

std::unique_ptr<GptStep> gpt_step(const GptShape& shape, bool bf16);

}  // namespace sx::cpu
