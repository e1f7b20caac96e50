#include "runtime/nccl_communicator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <future>
#include <thread>

#include "util/error.h"

namespace sx {

namespace {

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(const nccl::Api& api, nccl::Comm comm, int rank, int size, NcclDevice& device, double timeout_s)
      : api_(api), comm_(comm), rank_(rank), size_(size), device_(device), timeout_s_(timeout_s) {}
  ~NcclCommunicator() override {
    if (!aborted_) api_.comm_destroy(comm_);  // an aborted communicator is gone already
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void all_gather(const void* mine, size_t bytes, void* all) override {
    if (!bytes) return barrier();
    void* send = device_.buffer(bytes, 0);
    void* recv = device_.buffer(bytes * static_cast<size_t>(size_), 1);
    device_.to_device(send, mine, bytes);
    check(api_.all_gather(send, recv, bytes, nccl::kUint8, comm_, device_.stream()), "ncclAllGather");
    device_.to_host(all, recv, bytes * static_cast<size_t>(size_));
    watch("an all-gather");
  }
  void broadcast(void* data, size_t bytes, int root) override {
    if (!bytes) return barrier();
    void* buf = device_.buffer(bytes, 0);
    if (rank_ == root) device_.to_device(buf, data, bytes);
    check(api_.broadcast(buf, buf, bytes, nccl::kUint8, root, comm_, device_.stream()), "ncclBroadcast");
    device_.to_host(data, buf, bytes);
    watch("a broadcast");
  }
  void barrier() override {
    char one = 0;
    std::vector<char> all(static_cast<size_t>(size_));
    all_gather(&one, 1, all.data());
  }

 private:
  void check(nccl::Result r, const char* call) {
    if (r == nccl::kSuccess || r == nccl::kInProgress) return;
    api_.comm_abort(comm_);
    aborted_ = true;
    throw UserError(Code::NODE_011, {},
                    fmt::format("{} failed on GPU rank {}: {}", call, rank_, api_.get_error_string(r)),
                    "the last complete checkpoint is kept: run again with --resume latest");
  }
  void watch(const char* what) {
    try {
      nccl::watch_collective(
          api_, {comm_}, timeout_s_, [this] { return device_.idle(); }, fmt::format("{} of GPU rank {}", what, rank_));
    } catch (const UserError&) {
      aborted_ = true;  // the watchdog aborted it
      throw;
    }
  }

  const nccl::Api& api_;
  nccl::Comm comm_;
  int rank_, size_;
  NcclDevice& device_;
  double timeout_s_;
  bool aborted_ = false;
};

}  // namespace

std::vector<std::unique_ptr<Communicator>> make_nccl_node_communicators(const nccl::Api& api, Communicator& nodes,
                                                                        const std::vector<NcclDevice*>& devices,
                                                                        double timeout_s) {
  SX_ASSERT(!devices.empty(), "a GPU node of no GPU");
  nccl::UniqueId id{};
  if (nodes.leads())
    if (nccl::Result r = api.get_unique_id(&id); r != nccl::kSuccess)
      throw UserError(Code::NODE_011, {}, fmt::format("ncclGetUniqueId failed on node 0: {}", api.get_error_string(r)),
                      "check that node 0's GPU and network are up (nvidia-smi), or train the nodes on the cpu");
  nodes.broadcast(&id, sizeof id, 0);
  // Every GPU's init at once (each waits for all), on threads of their own, so
  // that a node that never comes is a bounded wait; a lost init is left to its thread.
  struct Init {
    nccl::Comm comm = nullptr;
    nccl::Result result = nccl::kSuccess;
  };
  const int gpus = static_cast<int>(devices.size()), n = nodes.size() * gpus;
  std::vector<std::future<Init>> inits;
  for (int g = 0; g < gpus; ++g) {
    auto done = std::make_shared<std::promise<Init>>();
    inits.push_back(done->get_future());
    const nccl::Api* a = &api;
    NcclDevice* device = devices[static_cast<size_t>(g)];
    const int rank = nodes.rank() * gpus + g;
    std::thread([a, done, device, n, id, rank] {
      device->make_current();
      Init i;
      i.result = a->comm_init_rank(&i.comm, n, id, rank);
      done->set_value(i);
    }).detach();
  }
  // Which rank, in words: a node's when each node has one GPU.
  auto which = [&](int g) {
    return gpus == 1 ? fmt::format("node {} of {}", nodes.rank(), nodes.size())
                     : fmt::format("GPU rank {} of {} (node {}, GPU {})", nodes.rank() * gpus + g, n, nodes.rank(), g);
  };
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s));
  std::vector<std::unique_ptr<Communicator>> out;
  for (int g = 0; g < gpus; ++g) {
    std::future<Init>& init = inits[static_cast<size_t>(g)];
    if (init.wait_until(deadline) != std::future_status::ready)
      throw UserError(Code::NODE_011, {},
                      fmt::format("ncclCommInitRank of {} did not finish within SEXPGPU_NODE_TIMEOUT ({} s): a node "
                                  "did not join NCCL",
                                  which(g), timeout_s),
                      "check that every node reaches the others' GPUs' network (NCCL_SOCKET_IFNAME), and raise "
                      "SEXPGPU_NODE_TIMEOUT if a node is only slow");
    Init i = init.get();
    if (i.result != nccl::kSuccess)
      throw UserError(Code::NODE_011, {},
                      fmt::format("ncclCommInitRank of {} failed: {}", which(g), api.get_error_string(i.result)),
                      "check that every node reaches the others' GPUs' network (NCCL_SOCKET_IFNAME)");
    out.push_back(std::make_unique<NcclCommunicator>(api, i.comm, nodes.rank() * gpus + g, n,
                                                     *devices[static_cast<size_t>(g)], timeout_s));
  }
  return out;
}

std::vector<std::unique_ptr<Communicator>> make_nccl_communicators(const nccl::Api& api,
                                                                   const std::vector<int>& ordinals,
                                                                   const std::vector<NcclDevice*>& devices,
                                                                   double timeout_s) {
  SX_ASSERT(ordinals.size() == devices.size() && !ordinals.empty(), "NCCL ranks without their devices");
  const int n = static_cast<int>(ordinals.size());
  std::vector<nccl::Comm> comms(ordinals.size());
  if (nccl::Result r = api.comm_init_all(comms.data(), n, ordinals.data()); r != nccl::kSuccess)
    throw UserError(Code::NODE_011, {},
                    fmt::format("ncclCommInitAll over CUDA devices {} failed: {}", fmt::join(ordinals, ","),
                                api.get_error_string(r)),
                    "check that every GPU of SEXPGPU_DEVICES can reach the others (nvidia-smi topo -m), or train "
                    "on one GPU with SEXPGPU_DEVICES=0");
  std::vector<std::unique_ptr<Communicator>> out;
  for (int r = 0; r < n; ++r)
    out.push_back(std::make_unique<NcclCommunicator>(api, comms[static_cast<size_t>(r)], r, n,
                                                     *devices[static_cast<size_t>(r)], timeout_s));
  return out;
}

}  // namespace sx
