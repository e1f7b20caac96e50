// nccl_gpu.h's nccl_across_nodes: apart from the adapter, since it needs the
// cuda device itself (and so the device registry at link time).
#include "backend/cuda/cuda_device.h"
#include "runtime/nccl_gpu.h"
#include "util/error.h"

namespace sx {

NcclNodes nccl_across_nodes(Communicator& nodes, backend::Device& device, double timeout_s) {
  const nccl::Api& api = nccl::require(nccl::library());
  cuda::Gpu* gpu = cuda::gpu_of(device);
  SX_ASSERT(gpu, "a GPU node whose device is not cuda");
  NcclNodes out;
  out.device = nccl_device_on(*gpu);
  out.comm = std::move(make_nccl_node_communicators(api, nodes, {out.device.get()}, timeout_s).front());
  gpu->make_current();  // NCCL set its device on this thread
  return out;
}

}  // namespace sx
