#pragma once
// The memory plan: which nodes a step computes, in what order, and where each
// one's values live in a single arena laid out once before the first step.
//
// Every element is 4 bytes (f32 and bf16 as float, i32 and bool as int32), so
// a node's buffer is numel * 4 bytes rounded up to kAlign. Params are owned
// outside the arena (the runtime binds them); inputs live in the arena at
// fixed offsets for the whole step and are never overwritten, so a batch
// written once can be run again. Outputs live to the end of the step so they
// can be read after it.
#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace sx::plan {

constexpr int64_t kAlign = 64;  // a cache line, and an AVX-512 vector

struct Options {
  bool in_place = true;  // elementwise (and row-wise fused) ops may overwrite a dying input
  bool alias = true;     // reshape, stop-gradient and tap share their input's buffer
  // A transpose (permute of the last two axes) read only by matmuls is not
  // materialised: the matmul reads its input transposed (sgemm's trans flag).
  bool fold_transpose = true;
  // A stopping signal's flag, polled while packing: Interrupted (util/interrupted.h).
  const std::atomic<bool>* stop = nullptr;
};

struct Plan {
  // The needed nodes in execution order (a topological order); Param and
  // Input nodes are included, the executor does nothing for them.
  std::vector<NodeId> schedule;
  // Per node: the node whose buffer holds its values — itself, or (through
  // aliasing and in-place reuse) an earlier node; kNoNode if not needed.
  std::vector<NodeId> storage;
  // Per node: byte offset of its values in the arena; -1 when it is not
  // computed or lives outside the arena (a param, or a view of one).
  std::vector<int64_t> offset;
  // Per node: whether it is a view that computes nothing and shares its
  // input's bytes (an alias op, or a folded transpose).
  std::vector<bool> view;
  // Per node: position in `schedule`, -1 if not needed.
  std::vector<int32_t> position;
  // Per storage node: its buffer's size in bytes (aligned) and lifetime as
  // schedule positions [first, last], inclusive; inputs span [0, schedule.size()],
  // outputs end at schedule.size(). Zero for non-storage nodes.
  std::vector<int64_t> bytes;
  std::vector<int32_t> first, last;
  std::vector<NodeId> outputs;
  int64_t arena_bytes = 0;  // the peak, known before the first step
  int64_t total_bytes = 0;  // sum of all arena buffers, what no reuse would take
  int in_place = 0;         // nodes written over a dying input
  int aliases = 0;          // views: nodes that share their input's buffer without a copy

  bool in_arena(NodeId n) const { return offset[n] >= 0; }
  // The n largest buffers, largest first (ties by node id), for explain.
  std::vector<std::pair<NodeId, int64_t>> largest(size_t n) const;
};

// The ops whose CPU kernel reads each element of input `i` before writing the
// same element of the output, so the output may take that input's buffer.
bool can_run_in_place(const Graph& g, NodeId node, size_t input);
// The ops whose output is their input's bytes unchanged.
bool is_alias_op(Op op);
// A permute that swaps the last two axes and keeps the others.
bool is_transpose(const Node& n);

// Plans the computation of `outputs` (loss, gradients, taps); deterministic.
Plan make_plan(const Graph& g, const std::vector<NodeId>& outputs, const Options& options = {});

}  // namespace sx::plan
