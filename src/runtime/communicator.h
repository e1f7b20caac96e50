#pragma once
// The processes of one run and what they share. Today a run is one process
// (LocalCommunicator); several nodes will be more ranks behind the same
// interface: the gradient all-reduce goes between a step's backward and its
// update, and only rank 0 reports and checkpoints.
#include <cstddef>
#include <memory>

namespace sx {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Sums `n` floats elementwise over the ranks, in place on every rank.
  virtual void all_reduce_sum(float* data, size_t n) = 0;
  // Copies `bytes` bytes from rank `root` into `data` on every other rank.
  virtual void broadcast(void* data, size_t bytes, int root) = 0;
  // Returns when every rank has called it.
  virtual void barrier() = 0;
  // The rank that writes the run's lines, records, status file and checkpoints.
  bool leads() const { return rank() == 0; }
};

// One process: rank 0 of 1; the collectives have nothing to exchange.
std::unique_ptr<Communicator> make_local_communicator();

}  // namespace sx
