#include "runtime/nccl_gpu.h"

namespace sx {

namespace {

class GpuForNccl final : public NcclDevice {
 public:
  explicit GpuForNccl(cuda::Gpu& gpu) : gpu_(gpu) {}

  void* buffer(size_t bytes, int which) override {
    Staging& s = staging_[which];
    if (s.bytes < bytes) {
      if (s.at) {
        gpu_.synchronize();  // nothing queued reads the old buffer any more
        gpu_.free(s.at);
      }
      s.at = gpu_.alloc(static_cast<int64_t>(bytes)), s.bytes = bytes;
    }
    return reinterpret_cast<void*>(s.at);
  }
  void to_device(void* dst, const void* src, size_t bytes) override {
    gpu_.upload(reinterpret_cast<cuda::DevicePtr>(dst), src, static_cast<int64_t>(bytes));
  }
  void to_host(void* dst, const void* src, size_t bytes) override {
    // NCCL sets the CUDA device of the communicator on this thread: the GPU's context again first.
    gpu_.make_current();
    gpu_.download_async(dst, reinterpret_cast<cuda::DevicePtr>(src), static_cast<int64_t>(bytes));
  }
  nccl::Stream stream() override { return gpu_.stream_handle(); }
  bool idle() override { return gpu_.idle(); }
  void make_current() override { gpu_.make_current(); }

 private:
  struct Staging {
    cuda::DevicePtr at = 0;
    size_t bytes = 0;
  };
  cuda::Gpu& gpu_;
  Staging staging_[2];
};

}  // namespace

std::unique_ptr<NcclDevice> nccl_device_on(cuda::Gpu& gpu) { return std::make_unique<GpuForNccl>(gpu); }
}  // namespace sx
