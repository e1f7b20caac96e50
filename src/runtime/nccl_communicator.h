#pragma once
// Several GPUs' Communicator over NCCL: one rank per GPU, all made by one
// ncclCommInitAll in this process, each rank called from the thread that
// drives its GPU (device_group.h). Host bytes go through two staging buffers
// on the GPU: copied in, gathered (or broadcast) by NCCL on the GPU's stream,
// copied out; every collective is watched (nccl_api.h's watch_collective), so
// an NCCL error or a rank that never comes is E-NODE-011 within the timeout.
// The sum stays the base class's rank-order sum of the gathered terms, so the
// GPUs keep the bits of one GPU.
#include <memory>
#include <vector>

#include "runtime/communicator.h"
#include "runtime/nccl_api.h"

namespace sx {

// What a rank needs of its GPU; copies and collectives are queued, in order,
// on stream(), and have happened once idle() says so.
class NcclDevice {
 public:
  virtual ~NcclDevice() = default;
  // Device memory of at least `bytes`, kept until the next call with a larger
  // size; `which` (0 or 1) tells the two staging buffers apart.
  virtual void* buffer(size_t bytes, int which) = 0;
  virtual void to_device(void* dst, const void* src, size_t bytes) = 0;
  virtual void to_host(void* dst, const void* src, size_t bytes) = 0;
  virtual nccl::Stream stream() = 0;
  virtual bool idle() = 0;
  // Makes the GPU the current CUDA device of the calling thread, as NCCL's
  // ncclCommInitRank needs (it takes the current device for its rank).
  virtual void make_current() {}
};

// Rank r of `ordinals` on devices[r]; E-NODE-011 when ncclCommInitAll fails.
std::vector<std::unique_ptr<Communicator>> make_nccl_communicators(const nccl::Api& api,
                                                                   const std::vector<int>& ordinals,
                                                                   const std::vector<NcclDevice*>& devices,
                                                                   double timeout_s);

// Several GPU nodes of G GPUs each (`devices`, the same number on every
// node): this node's ranks of one NCCL communicator over every GPU of every
// node, GPU g of node n being rank n x G + g (node_group_communicator.h's
// order), bootstrapped through `nodes` (Gloo): node 0's ncclGetUniqueId
// broadcast to every node, then one ncclCommInitRank per GPU, each on a
// thread of its own with its GPU current. Each waits for every rank: bounded
// by the timeout (E-NODE-011), since NCCL's own bootstrap may wait for a node
// that never comes.
std::vector<std::unique_ptr<Communicator>> make_nccl_node_communicators(const nccl::Api& api, Communicator& nodes,
                                                                        const std::vector<NcclDevice*>& devices,
                                                                        double timeout_s);

}  // namespace sx
