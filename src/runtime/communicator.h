#pragma once
// The processes of one run and what they share (docs/nodes.md). One process
// is LocalCommunicator; several nodes are ranks of a Gloo communicator over
// TCP (gloo_communicator.cpp), met through node 0's rendezvous store
// (node_meeting.cpp). The gradient exchange goes between a step's last
// accumulate_gradients and its update (node_step.h); only rank 0 reports and
// checkpoints. An NCCL communicator for several GPUs fits behind the same
// interface: all_gather and broadcast of device buffers.
//
// Every sum is in rank order — gather everything to every rank, then add
// rank 0, 1, ..., N-1 to a zero — so that every rank gets the same bits and
// N ranks equal one process adding the same N terms one after another.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "util/environment.h"

namespace sx {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Rank r's `bytes` bytes at `all + r * bytes` on every rank (its own included).
  virtual void all_gather(const void* mine, size_t bytes, void* all) = 0;
  // Copies `bytes` bytes from rank `root` into `data` on every other rank.
  virtual void broadcast(void* data, size_t bytes, int root) = 0;
  // Returns when every rank has called it.
  virtual void barrier() = 0;
  // This rank gives up (its device failed): where the other ranks can be told
  // (in this process), their collectives in progress or to come throw `why` at
  // once; elsewhere their timeouts bound them, as for a rank that died.
  virtual void abandon(std::exception_ptr why) { (void)why; }

  // Sums `n` floats elementwise over the ranks, in rank order, in place on
  // every rank; with `bf16`, each rank's values cross rounded to bf16 (its
  // own too, so that every rank adds the same terms).
  void all_reduce_sum(float* data, size_t n, GradientPrecision wire = GradientPrecision::f32);
  // The first non-zero `value` in rank order (a stopping signal), 0 when none.
  int first_nonzero(int value);

  // The rank that writes the run's lines, records, status file and checkpoints.
  bool leads() const { return rank() == 0; }
};

// One process: rank 0 of 1; the collectives have nothing to exchange.
std::unique_ptr<Communicator> make_local_communicator();

// bf16 halves of f32 (round to nearest even; a NaN stays a NaN), and back.
uint16_t to_bf16_bits(float x);
float from_bf16_bits(uint16_t b);

// Where and how this node meets the others: SEXPGPU_NODES, SEXPGPU_NODE_RANK,
// SEXPGPU_RENDEZVOUS, SEXPGPU_NODE_ADDRESS, SEXPGPU_NODE_TIMEOUT.
struct NodeSetup {
  int rank = 0;
  int nodes = 1;
  Rendezvous rendezvous;
  std::optional<std::string> address;  // none: the local address of the route to node 0
  double timeout_s = 300;
};
NodeSetup node_setup(const Environment& env);

// Whether this build has Gloo, which several nodes need (E-NODE-001 without).
bool have_gloo();

// Meets the other nodes (node_meeting.cpp): node 0 hosts the store, every node
// shows `hello` (what must be equal on every node, as name -> value), and
// refuses, on every node, when one differs (E-NODE-002), or when a node does
// not come within the timeout (E-NODE-003). Then connects Gloo's full mesh.
// Without Gloo in the build: E-NODE-001.
struct NodeHello;
std::unique_ptr<Communicator> meet_nodes(const NodeSetup& setup, const NodeHello& hello);

}  // namespace sx
