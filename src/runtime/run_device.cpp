#include "runtime/run_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "runtime/init_from.h"
#include "runtime/params.h"
#include "util/error.h"

namespace sx {

RunDevice open_run_device(std::string_view name, const Compiled& c, const std::string& base_dir, int threads) {
  const RunDecl& run = *c.x->run;
  RunDevice d;
  d.device = backend::make_device(name, {.threads = threads});
  d.device->allocate(c.params, run.optimizer.get());
  // Initial values are drawn on the host (they are the reference's, bit for
  // bit), then uploaded once.
  ParamStore init = init_params(c.params, static_cast<uint64_t>(run.seed), threads);
  if (!run.init_from.empty()) apply_init_from(init, run, base_dir);
  for (const auto& [path, values] : init.values) d.device->upload(path, values);
  d.train = d.device->load(c.train.traced.graph, c.train.plan, c.train.grads.params);
  for (const auto& p : c.passes) d.passes.push_back(d.device->load(p.step.traced.graph, p.step.plan));
  return d;
}

StepSums run_microbatches(RunDevice& d, const Compiled& c, TrainFeed& feed, int64_t k, std::vector<int32_t>& tokens,
                          std::vector<int32_t>& targets) {
  const int64_t m = c.x->run->microbatches;
  StepSums s;
  s.metrics.assign(c.train.traced.metrics.size(), 0.0);
  s.taps.assign(c.train.taps.size(), 0.0);
  backend::Device& dev = *d.device;
  for (int64_t j = 0; j < m; ++j) {
    feed.next(c.micro_rows, tokens, targets);
    dev.run(d.train, {{"tokens", tokens.data()}, {"targets", targets.data()}},
            (static_cast<uint64_t>(k) << 16) | static_cast<uint64_t>(j));
    s.loss += dev.scalar(d.train, c.train.traced.loss);
    for (size_t i = 0; i < s.metrics.size(); ++i) s.metrics[i] += dev.scalar(d.train, c.train.traced.metrics[i].second);
    for (size_t i = 0; i < s.taps.size(); ++i) s.taps[i] += dev.scalar(d.train, c.train.taps[i].node);
    dev.accumulate_gradients(d.train, j, m);
  }
  return s;
}

std::optional<std::string> first_nonfinite(const backend::Device& d, float loss) {
  if (!std::isfinite(loss)) return "train/loss";
  if (auto path = d.first_nonfinite_gradient()) return "grad/" + *path;
  return std::nullopt;
}

void run_pass_batch(RunDevice& d, const Compiled& c, size_t pass, const std::vector<int32_t>& tokens,
                    const std::vector<int32_t>& targets, double& loss, std::vector<double>& sums) {
  const StepGraph& g = c.passes[pass].step;
  backend::GraphHandle h = d.passes[pass];
  d.device->run(h, {{"tokens", tokens.data()}, {"targets", targets.data()}}, 0);
  loss += d.device->scalar(h, g.traced.loss);
  for (size_t m = 0; m < sums.size(); ++m) sums[m] += d.device->scalar(h, g.traced.metrics[m].second);
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
