#pragma once
// A graph loaded on the CUDA device: its lowering turned into the calls the
// device makes (kernels of the IR, cuBLASLt calls), and the arena those
// calls' values live in, laid out by launch order.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/cuda/gpu.h"
#include "backend/cuda/lower.h"

namespace sx::cuda {

// A sequence of calls the device makes again and again, as a CUDA graph
// once it has run (cuda_device.cpp's as_graph).
struct Captured {
  GraphExecHandle exec = -1;
  int64_t runs = 0;
};

// One call of a step, in order.
struct Call {
  bool is_gemm = false;
  kir::Kernel kernel;  // !is_gemm
  kir::Gemm gemm;      // is_gemm
  KernelCall launch;   // pointers bound at load, its scalars' words in the graph's table
  GemmCall gemm_call;
  int rng_word = -1;     // the word of the graph's table that is its rng_offset, -1 when it draws nothing
  int from_launch = -1;  // the index of the lowering's launch it comes from
};

struct LoadedGraph {
  const Graph* g = nullptr;
  const plan::Plan* p = nullptr;
  std::shared_ptr<const plan::Plan> owned_plan;  // the device's copy (load's may be a temporary)
  Lowering lowering;
  std::vector<Call> calls;
  std::map<NodeId, DevicePtr> where;  // every value's address (params and their copies included)
  DevicePtr arena = 0;
  int64_t arena_bytes = 0;
  std::map<std::string, NodeId> gradients;
  // Every call's scalars, one word each (gpu.h), uploaded to `scalars`
  // before each run: what a replay of the captured calls reads.
  std::vector<uint64_t> words;
  DevicePtr scalars = 0;
  Captured captured;  // the calls as one graph, from the second run on
};

// Where the device keeps what outlives a graph.
struct Resident {
  std::function<DevicePtr(const std::string&)> param;       // f32 master weights by path
  std::function<DevicePtr(const std::string&)> param_copy;  // bf16 copy by path (made when first asked)
};

// The calls of `lowering`, in order, unbound: each cublas launch's products
// (and the kernel of the epilogue nodes they cannot fold), each generated
// launch's kernel; the optimizer's launches are the device's own.
std::vector<Call> build_calls(const Graph& g, const plan::Plan& p, const Lowering& lowering);

// The calls of `lowering` with their buffers bound, the arena allocated on
// `gpu` and laid out, constant outputs written once.
LoadedGraph load_graph(Gpu& gpu, const Graph& g, const plan::Plan& p, Lowering lowering, const Resident& resident);

// The node whose buffer holds `id`'s values (through aliases).
NodeId storage_of(const Graph& g, const plan::Plan& p, NodeId id);
// A value's element type in device memory.
kir::Type value_type(const Node& n);

}  // namespace sx::cuda
