#include "runtime/device_group.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <thread>

#include "backend/cuda/cuda_device.h"
#include "runtime/inprocess_communicator.h"
#include "runtime/nccl_gpu.h"
#include "runtime/node_group_communicator.h"
#include "util/error.h"

namespace sx {

// A rank's thread and the one task it runs at a time. The thread holds the
// Rank too: a rank lost in a hang is left to its thread, never joined.
struct DeviceGroup::Rank {
  RunDevice dev;  // made, used and ended on `thread`
  std::thread thread;
  std::mutex mutex;
  std::condition_variable posted;
  std::deque<std::packaged_task<void()>> tasks;
  std::future<void> pending;  // the last posted task's
  bool quit = false;
  bool lost = false;  // did not answer in time

  void post(std::function<void()> f) {
    std::packaged_task<void()> t(std::move(f));
    pending = t.get_future();
    std::lock_guard<std::mutex> l(mutex);
    tasks.push_back(std::move(t));
    posted.notify_one();
  }

  static void serve(std::shared_ptr<Rank> self) {
    for (;;) {
      std::packaged_task<void()> task;
      {
        std::unique_lock<std::mutex> l(self->mutex);
        self->posted.wait(l, [&] { return self->quit || !self->tasks.empty(); });
        if (self->tasks.empty()) break;
        task = std::move(self->tasks.front());
        self->tasks.pop_front();
      }
      task();
    }
    self->dev = {};  // the device ends on the thread that made it
  }
};

namespace {

// The step's gradient summed over the ranks in rank order, on every rank.
void sum_gradient_over_ranks(backend::Device& d, Communicator& comm, GradientPrecision wire) {
  std::vector<float> g(d.step_gradient_size());
  d.read_step_gradient(g.data());
  comm.all_reduce_sum(g.data(), g.size(), wire);
  d.write_step_gradient(g.data());
}

// What one step gives its ranks and gets back, kept alive by every task that reads it.
struct StepWork {
  std::vector<std::vector<int32_t>> tokens, targets;  // per microbatch of the step
  std::vector<StepSums> sums;                         // per rank
};

// Local rank r's share of step k: its microbatches (numbered over every rank
// of `comm`: of every node), then the exchange. A rank that fails tells the
// others at once, so that they do not wait out the timeout.
void run_share(RunDevice& d, const Compiled& c, Communicator& comm, GradientPrecision wire, StepWork& w, int64_t k,
               size_t r) {
  const int64_t m = c.x->run->microbatches, all = m * comm.size();
  try {
    for (int64_t j = 0; j < m; ++j) {
      const size_t i = r * static_cast<size_t>(m) + static_cast<size_t>(j);
      run_microbatch(d, c, k, comm.rank() * m + j, j, all, w.tokens[i], w.targets[i]);
    }
    add_kept_scalars(d, c, w.sums[r]);
    sum_gradient_over_ranks(*d.device, comm, wire);
  } catch (...) {
    comm.abandon(std::current_exception());
    throw;
  }
}

}  // namespace

DeviceGroup::DeviceGroup(std::string_view device, const Compiled& c, const std::string& base_dir, int threads,
                         const std::vector<int>& ordinals, double timeout_s, const nccl::Api* nccl, Communicator& nodes,
                         GradientPrecision wire)
    : c_(c), ordinals_(ordinals), timeout_s_(timeout_s), nccl_(nccl), nodes_(nodes), wire_(wire) {
  SX_ASSERT(ordinals.size() > 1, "a device group of one GPU");
  if (!nccl_) {
    auto local = make_inprocess_communicators(size(), timeout_s);
    if (spans_nodes()) local = make_node_group_communicators(std::move(local), nodes_);
    for (auto& comm : local) comms_.push_back(std::move(comm));
  }
  ranks_.resize(ordinals.size());
  for (size_t r = 1; r < ordinals.size(); ++r) {
    auto rank = std::make_shared<Rank>();
    rank->thread = std::thread(Rank::serve, rank);
    Rank* self = rank.get();
    const std::string name(device), dir(base_dir);
    const int ordinal = ordinals[r];
    rank->post(
        [self, name, &c, dir, threads, ordinal] { self->dev = open_run_device(name, c, dir, threads, ordinal); });
    ranks_[r] = std::move(rank);
  }
}

DeviceGroup::~DeviceGroup() {
  comms_.clear();  // NCCL's communicators end while their GPUs are there
  for (size_t r = 1; r < ranks_.size(); ++r) {
    Rank& rank = *ranks_[r];
    {
      std::lock_guard<std::mutex> l(rank.mutex);
      rank.quit = true;
      rank.posted.notify_one();
    }
    if (rank.lost)
      rank.thread.detach();  // it may never return; the process ends without it
    else
      rank.thread.join();
  }
}

void DeviceGroup::opened(RunDevice& lead) {
  // Opening is not a collective: it takes as long as it takes, as on one GPU.
  for (size_t r = 1; r < ranks_.size(); ++r) ranks_[r]->pending.get();
  if (!nccl_) return;
  std::vector<NcclDevice*> devices;
  for (size_t r = 0; r < ranks_.size(); ++r) {
    cuda::Gpu* gpu = cuda::gpu_of(r == 0 ? *lead.device : *ranks_[r]->dev.device);
    SX_ASSERT(gpu, "a GPU rank whose device is not cuda");
    nccl_devices_.push_back(nccl_device_on(*gpu));
    devices.push_back(nccl_devices_.back().get());
  }
  for (auto& comm : spans_nodes() ? make_nccl_node_communicators(*nccl_, nodes_, devices, timeout_s_)
                                  : make_nccl_communicators(*nccl_, ordinals_, devices, timeout_s_))
    comms_.push_back(std::move(comm));
  // ncclCommInitAll set each GPU's device on this thread in turn: rank 0's context again.
  cuda::gpu_of(*lead.device)->make_current();
}

void DeviceGroup::wait(size_t r, const char* what) {
  Rank& rank = *ranks_[r];
  if (rank.pending.wait_for(std::chrono::duration<double>(timeout_s_)) != std::future_status::ready) {
    rank.lost = true;
    throw UserError(Code::NODE_011, {},
                    fmt::format("GPU rank {} (CUDA device {}) did not finish {} within SEXPGPU_NODE_TIMEOUT ({} s)", r,
                                ordinals_[r], what, timeout_s_),
                    "the last complete checkpoint is kept: run again with --resume latest; raise "
                    "SEXPGPU_NODE_TIMEOUT if a GPU is only slow");
  }
  rank.pending.get();
}

void DeviceGroup::settle() {
  const auto grace = std::chrono::duration<double>(std::min(timeout_s_, 2.0));
  for (size_t r = 1; r < ranks_.size(); ++r) {
    Rank& rank = *ranks_[r];
    if (!rank.pending.valid()) continue;
    if (rank.pending.wait_for(grace) != std::future_status::ready)
      rank.lost = true;
    else
      rank.pending = {};
  }
}

StepSums DeviceGroup::run_step(RunDevice& lead, TrainFeed& feed, int64_t k) {
  const size_t n = static_cast<size_t>(size());
  const size_t microbatches = n * static_cast<size_t>(c_.x->run->microbatches);
  auto work = std::make_shared<StepWork>();
  work->tokens.resize(microbatches);
  work->targets.resize(microbatches);
  work->sums.resize(n);
  // The other nodes' shares are read past, so that every node's loader is where one process's would be.
  const int64_t before = static_cast<int64_t>(microbatches) * nodes_.rank(),
                after = static_cast<int64_t>(microbatches) * (nodes_.size() - 1 - nodes_.rank());
  std::vector<int32_t> past_tokens, past_targets;
  if (before) feed.next(before * c_.micro_rows, past_tokens, past_targets);
  for (size_t i = 0; i < microbatches; ++i) feed.next(c_.micro_rows, work->tokens[i], work->targets[i]);
  if (after) feed.next(after * c_.micro_rows, past_tokens, past_targets);
  for (size_t r = 1; r < n; ++r) {
    Rank* rank = ranks_[r].get();
    std::shared_ptr<Communicator> comm = comms_[r];
    const Compiled* c = &c_;
    const GradientPrecision wire = wire_;
    rank->post([rank, comm, c, wire, work, k, r] { run_share(rank->dev, *c, *comm, wire, *work, k, r); });
  }
  try {
    run_share(lead, c_, *comms_[0], wire_, *work, k, 0);
    for (size_t r = 1; r < n; ++r) wait(r, fmt::format("step {}", k).c_str());
  } catch (...) {
    settle();
    throw;
  }
  StepSums total = work->sums[0];
  for (size_t r = 1; r < n; ++r) {
    const StepSums& s = work->sums[r];
    total.loss += s.loss;
    for (size_t i = 0; i < s.metrics.size(); ++i) total.metrics[i] += s.metrics[i];
    for (size_t i = 0; i < s.taps.size(); ++i) total.taps[i] += s.taps[i];
  }
  return total;
}

StepStats DeviceGroup::update(RunDevice& lead, int64_t k, double lr, bool want_stats) {
  for (size_t r = 1; r < ranks_.size(); ++r) {
    Rank* rank = ranks_[r].get();
    rank->post([rank, k, lr] { rank->dev.device->update(k, lr, false); });
  }
  try {
    StepStats stats = lead.device->update(k, lr, want_stats);
    for (size_t r = 1; r < ranks_.size(); ++r) wait(r, fmt::format("the update of step {}", k).c_str());
    return stats;
  } catch (...) {
    settle();
    throw;
  }
}

void DeviceGroup::upload(const ckpt::CheckpointData& in, const std::string& checkpoint) {
  const Compiled* c = &c_;
  for (size_t r = 1; r < ranks_.size(); ++r) {
    Rank* rank = ranks_[r].get();
    rank->post([rank, c, &in, &checkpoint] { upload_from_checkpoint(*rank->dev.device, c->params, in, checkpoint); });
  }
  try {
    for (size_t r = 1; r < ranks_.size(); ++r) wait(r, "loading the checkpoint");
  } catch (...) {
    settle();
    throw;
  }
}

std::unique_ptr<DeviceGroup> open_devices(std::string_view device, const Compiled& c, const std::string& base_dir,
                                          const Environment& env, RunDevice& lead, Communicator& nodes) {
  const std::vector<int>& gpus = env.devices;
  if (env.device != Device::cuda || gpus.size() < 2) {
    lead = open_run_device(device, c, base_dir, env.threads);
    return nullptr;
  }
  // Real GPUs exchange over NCCL, found before any GPU is opened (E-NODE-010).
  const nccl::Api* api = env.cuda_emulate > 0 ? nullptr : &nccl::require(nccl::library());
  // Ranks 1 ... open on their own threads while rank 0 opens here.
  auto group = std::make_unique<DeviceGroup>(device, c, base_dir, env.threads, gpus, env.node_timeout_s, api, nodes,
                                             env.node_gradients);
  lead = open_run_device(device, c, base_dir, env.threads, gpus[0]);
  group->opened(lead);
  return group;
}

StepSums run_step(DeviceGroup* group, RunDevice& lead, const Compiled& c, TrainFeed& feed, int64_t k,
                  std::vector<int32_t>& tokens, std::vector<int32_t>& targets, const Communicator& nodes) {
  if (group) return group->run_step(lead, feed, k);
  return run_microbatches(lead, c, feed, k, tokens, targets, nodes.rank(), nodes.size());
}

StepStats update_step(DeviceGroup* group, RunDevice& lead, int64_t k, double lr, bool want_stats) {
  return group ? group->update(lead, k, lr, want_stats) : lead.device->update(k, lr, want_stats);
}

std::vector<int> emulated_ordinals(int visible, const std::vector<int>& asked) {
  std::vector<int> ordinals = asked;
  if (asked.empty())
    for (int o = 0; o < visible; ++o) ordinals.push_back(o);
  for (int o : ordinals)
    if (o >= visible)
      throw UserError(Code::DEV_006, {},
                      fmt::format("SEXPGPU_DEVICES names CUDA device {}, but SEXPGPU_CUDA_EMULATE={} emulates {} "
                                  "(ordinals 0 to {})",
                                  o, visible, visible, visible - 1),
                      fmt::format("name ordinals below {} in SEXPGPU_DEVICES, or emulate more devices with "
                                  "SEXPGPU_CUDA_EMULATE",
                                  visible));
  return ordinals;
}

}  // namespace sx
