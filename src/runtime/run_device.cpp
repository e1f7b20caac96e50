#include "runtime/run_device.h"

#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "backend/cuda/cuda_device.h"
#include "backend/cuda/report.h"
#include "runtime/init_from.h"
#include "runtime/params.h"
#include "util/error.h"

namespace sx {

RunDevice open_run_device(std::string_view name, const Compiled& c, const std::string& base_dir, int threads,
                          int ordinal) {
  const RunDecl& run = *c.x->run;
  RunDevice d;
  d.device = backend::make_device(name, {.threads = threads, .precision = run.precision, .ordinal = ordinal});
  d.device->allocate(c.params, run.optimizer.get());
  {
    // Initial values are drawn on the host (they are the reference's, bit for
    // bit), then uploaded once, and freed before the graphs' arenas are made:
    // the host copy must not add to the run's peak.
    ParamStore init = init_params(c.params, static_cast<uint64_t>(run.seed), threads);
    if (!run.init_from.empty()) apply_init_from(init, run, base_dir);
    for (const auto& [path, values] : init.values) d.device->upload(path, values);
  }
  // glibc keeps the freed copies' pages resident (they sit between live
  // blocks); handing them back keeps the run's peak RSS what it was before the
  // device owned the parameters (+4.3 MiB on bench/run.sh's medium otherwise).
  // Not under AddressSanitizer, whose allocator replaces glibc's: there
  // glibc's arenas were never set up, and a trim from a device group's rank
  // thread read a null arena.
#if !defined(__SANITIZE_ADDRESS__)
  malloc_trim(0);
#endif
  d.train = d.device->load(c.train.traced.graph, c.train.plan, c.train.grads.params);
  for (const auto& p : c.passes) d.passes.push_back(d.device->load(p.step.traced.graph, p.step.plan));
  return d;
}

StepSums run_microbatches(RunDevice& d, const Compiled& c, TrainFeed& feed, int64_t k, std::vector<int32_t>& tokens,
                          std::vector<int32_t>& targets, int rank, int nodes) {
  const int64_t m = c.x->run->microbatches;
  const int64_t first = rank * m, all = nodes * m;
  StepSums s;
  // The other nodes' shares are read past, so that every node's loader is where one process's would be.
  if (first > 0) feed.next(first * c.micro_rows, tokens, targets);
  for (int64_t j = 0; j < m; ++j) {
    feed.next(c.micro_rows, tokens, targets);
    run_microbatch(d, c, k, first + j, j, all, tokens, targets);
  }
  add_kept_scalars(d, c, s);
  if (int64_t after = all - first - m; after > 0) feed.next(after * c.micro_rows, tokens, targets);
  return s;
}

namespace {
// What a microbatch reports: its loss, each metric, each tap.
std::vector<NodeId> reported(const Compiled& c) {
  std::vector<NodeId> ids{c.train.traced.loss};
  for (const auto& m : c.train.traced.metrics) ids.push_back(m.second);
  for (const auto& t : c.train.taps) ids.push_back(t.node);
  return ids;
}
}  // namespace

void run_microbatch(RunDevice& d, const Compiled& c, int64_t k, int64_t index, int64_t j, int64_t all,
                    const std::vector<int32_t>& tokens, const std::vector<int32_t>& targets) {
  backend::Device& dev = *d.device;
  dev.run(d.train, {{"tokens", tokens.data()}, {"targets", targets.data()}},
          (static_cast<uint64_t>(k) << 16) | static_cast<uint64_t>(index));
  dev.keep_scalars(d.train, reported(c));
  dev.accumulate_gradients(d.train, j, all);
}

void add_kept_scalars(RunDevice& d, const Compiled& c, StepSums& s) {
  s.metrics.resize(c.train.traced.metrics.size(), 0.0);
  s.taps.resize(c.train.taps.size(), 0.0);
  const std::vector<float> v = d.device->kept_scalars();
  const size_t n = 1 + s.metrics.size() + s.taps.size();
  SX_ASSERT(v.size() % n == 0, "kept scalars that are not whole microbatches'");
  for (size_t at = 0; at < v.size(); at += n) {
    s.loss += v[at];
    for (size_t i = 0; i < s.metrics.size(); ++i) s.metrics[i] += v[at + 1 + i];
    for (size_t i = 0; i < s.taps.size(); ++i) s.taps[i] += v[at + 1 + s.metrics.size() + i];
  }
}

std::optional<std::string> first_nonfinite(const backend::Device& d, float loss) {
  if (!std::isfinite(loss)) return "train/loss";
  if (auto path = d.first_nonfinite_gradient()) return "grad/" + *path;
  return std::nullopt;
}

void run_pass_batch(RunDevice& d, const Compiled& c, size_t pass, const std::vector<int32_t>& tokens,
                    const std::vector<int32_t>& targets) {
  const StepGraph& g = c.passes[pass].step;
  backend::GraphHandle h = d.passes[pass];
  d.device->run(h, {{"tokens", tokens.data()}, {"targets", targets.data()}}, 0);
  std::vector<NodeId> ids{g.traced.loss};
  for (const auto& m : g.traced.metrics) ids.push_back(m.second);
  d.device->keep_scalars(h, ids);
}

void add_kept_pass_scalars(RunDevice& d, double& loss, std::vector<double>& sums) {
  const std::vector<float> v = d.device->kept_scalars();
  const size_t n = 1 + sums.size();
  SX_ASSERT(v.size() % n == 0, "kept scalars that are not whole batches'");
  for (size_t at = 0; at < v.size(); at += n) {
    loss += v[at];
    for (size_t m = 0; m < sums.size(); ++m) sums[m] += v[at + 1 + m];
  }
}

void report_gpu(const RunDevice& d, const Compiled& c, bool explain_kernels, Timings& timings) {
  const auto* r = dynamic_cast<const cuda::CudaReport*>(d.device.get());
  if (!r) return;
  int64_t plan_bytes = 0;
  std::vector<uint64_t> kernels;
  for (size_t i = 0; i < r->lowerings().size(); ++i) {
    const auto& l = r->lowerings()[i];
    const StepGraph& s = i == 0 ? c.train : c.passes.at(i - 1).step;
    cuda::DevicePlan plan = cuda::run_device_plan(*l.graph, s.plan, l.lowering, *c.x->run, c.params, i == 0);
    plan_bytes = std::max(plan_bytes, plan.total());
    const cuda::CompiledLaunches* code = l.compiled ? &*l.compiled : nullptr;
    std::string line =
        cuda::report_line(i == 0 ? "train-step" : c.passes[i - 1].decl->name, l.lowering, plan.total(), code);
    std::cerr << line << (line.ends_with('\n') ? "" : "\n");
    if (explain_kernels) std::cerr << cuda::kernel_lines(*l.graph, l.lowering, code);
    for (const auto& launch : l.lowering.launches)
      if (!launch.cublas()) kernels.push_back(launch.structure);
  }
  std::sort(kernels.begin(), kernels.end());
  size_t distinct = static_cast<size_t>(std::unique(kernels.begin(), kernels.end()) - kernels.begin());
  // Read when the block is printed: a kernel compiled at its first launch counts too.
  if (r->kernel_counters())
    timings.kernels_line = [r] { return cuda::timing_kernels_line(*r->kernel_counters()); };
  else  // the emulated device interpreting, NVRTC not asked: the kernels the lowering would compile, counted
    timings.kernels_line = [distinct] { return fmt::format("timing kernels {} generated, not compiled", distinct); };
  const cuda::Gpu& gpu = r->gpu();
  timings.memory_line = [&gpu, plan_bytes] {
    return fmt::format("memory: peak {} of {} (plan {})\n", cuda::gib_text(gpu.peak_allocated()),
                       cuda::gib_text(gpu.total_memory()), cuda::gib_text(plan_bytes));
  };
}

namespace {
const ParamInfo& param_of(const std::vector<ParamInfo>& params, const std::string& path) {
  auto it = std::find_if(params.begin(), params.end(), [&](const ParamInfo& p) { return p.path == path; });
  SX_ASSERT(it != params.end(), "optimizer state of an unknown parameter");
  return *it;
}
// "adamw.m/<path>" -> "<path>"
std::string state_param(const std::string& name) { return name.substr(name.find('/') + 1); }
}  // namespace

void download_for_checkpoint(const backend::Device& d, const std::vector<ParamInfo>& params,
                             ckpt::CheckpointData& out) {
  for (const auto& p : params) out.model[p.path] = {p.shape.vec(), d.download(p.path)};
  for (const auto& name : d.optimizer_state_names())
    out.optimizer[name] = {param_of(params, state_param(name)).shape.vec(), d.download_optimizer_state(name)};
}

void upload_from_checkpoint(backend::Device& d, const std::vector<ParamInfo>& params, const ckpt::CheckpointData& in,
                            const std::string& checkpoint) {
  auto bad_state = [&](const std::string& what) {
    return UserError(Code::CKPT_024, {}, fmt::format("checkpoint {}: {}", checkpoint, what));
  };
  for (const auto& p : params) {
    auto it = in.model.find(p.path);
    if (it == in.model.end() || static_cast<int64_t>(it->second.values.size()) != p.shape.numel())
      throw bad_state("model.safetensors has no tensor `" + p.path + "` of the model's size");
  }
  const auto names = d.optimizer_state_names();
  for (const auto& name : names) {
    auto it = in.optimizer.find(name);
    if (it == in.optimizer.end() ||
        static_cast<int64_t>(it->second.values.size()) != param_of(params, state_param(name)).shape.numel())
      throw bad_state("optimizer.safetensors has no tensor `" + name + "` of the right size");
  }
  for (const auto& p : params) d.upload(p.path, in.model.at(p.path).values);
  for (const auto& name : names) d.upload_optimizer_state(name, in.optimizer.at(name).values);
}

}  // namespace sx
