#pragma once
// What the runtime needs of a backend: run one graph on the current parameters
// and a batch, then read its outputs. The reference backend and the fast cpu
// backend both implement it; the runtime does not know which it drives.
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "plan/plan.h"
#include "runtime/params.h"

namespace sx {

class Executor {
 public:
  virtual ~Executor() = default;
  // Feeds `tokens`/`targets` (rows × seq-len int32 each, by input name) and the
  // parameters, and computes the outputs the executor was built for.
  virtual void run(const std::vector<std::pair<std::string, const int32_t*>>& inputs, const ParamStore& params,
                   uint64_t rng_offset) = 0;
  // An output's values after run (numel of the node's shape).
  virtual const float* output(NodeId id) const = 0;
  float scalar(NodeId id) const { return output(id)[0]; }
};

// The naive reference backend: the definition of every op; slow, for tests
// and for checking the fast backend.
std::unique_ptr<Executor> make_ref_executor(const Graph& g, std::vector<NodeId> outputs);

// The fast cpu backend over a memory plan, on `threads` threads; results are
// bit-identical for any thread count.
std::unique_ptr<Executor> make_cpu_executor(const Graph& g, const plan::Plan& p, int threads);

}  // namespace sx
