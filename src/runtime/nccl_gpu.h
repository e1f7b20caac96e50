#pragma once
// What NCCL needs of a rank's GPU (nccl_communicator.h's NcclDevice), over
// the CUDA device's gpu.h: staging buffers in device memory, copies queued
// on the GPU's one stream, the stream itself for NCCL's kernels, and a
// completion query that never waits (the watchdog polls it).
#include <memory>

#include "backend/cuda/gpu.h"
#include "backend/device.h"
#include "runtime/nccl_communicator.h"

namespace sx {

// `gpu` must outlive it; it is used from the thread that drives the GPU.
// Its staging buffers are the GPU's until the GPU ends.
std::unique_ptr<NcclDevice> nccl_device_on(cuda::Gpu& gpu);

// Nodes of one real GPU each: this node's GPU (the cuda device `device`, on
// this thread) in an NCCL communicator over the nodes of `nodes`, found
// (E-NODE-010) and bootstrapped through it (make_nccl_node_communicators).
struct NcclNodes {
  std::unique_ptr<NcclDevice> device;
  std::unique_ptr<Communicator> comm;
};
NcclNodes nccl_across_nodes(Communicator& nodes, backend::Device& device, double timeout_s);

}  // namespace sx
