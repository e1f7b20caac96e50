#include "runtime/run_checkpoints.h"

#include <algorithm>

#include "runtime/optimizer.h"
#include "runtime/params.h"

namespace sx {

void RunCheckpoints::claim(const std::string& slug, bool resuming) {
  store_ = ckpt::open_store(*location_, slug);
  lock_ = ckpt::claim_location(*store_, resuming);
}

std::string RunCheckpoints::text(const std::optional<int64_t>& every) const {
  if (!location_) return "-";
  return every ? fmt::format("{} every {}", location_->text, *every) : location_->text;
}

std::string RunCheckpoints::locate(const ResumeFrom& from) {
  std::string dir;
  if (from.latest) {
    SX_ASSERT(store_, "--resume latest without a claimed checkpoint location");
    auto latest = ckpt::find_latest(*store_);
    if (!latest) return "latest=none";
    dir = store_->where(*latest);
    resume_.emplace();
    resume_->data = ckpt::read_checkpoint(*store_, *latest);
  } else {
    dir = from.location.text;
    resume_.emplace();
    resume_->data = ckpt::read_checkpoint(dir);
  }
  resume_->path = dir;
  resume_->step = resume_->data.step;
  return from.latest ? "latest=" + dir : dir;
}

ckpt::WriteResult RunCheckpoints::write(const ckpt::CheckpointData& data, const std::optional<int64_t>& keep) {
  ckpt::WriteResult w = ckpt::write_checkpoint(*store_, data);
  if (keep) ckpt::keep_newest(*store_, *keep);
  return w;
}

namespace {

const ParamInfo& info_of(const ParamStore& params, const std::string& path) {
  return *std::find_if(params.info.begin(), params.info.end(), [&](const ParamInfo& p) { return p.path == path; });
}

}  // namespace

ckpt::CheckpointData assemble_checkpoint(int64_t step, const ParamStore& params, Optimizer& optimizer, Json state) {
  ckpt::CheckpointData d;
  d.step = step;
  for (const auto& [path, v] : params.values) d.model[path] = {info_of(params, path).shape.vec(), v};
  for (const auto& [name, v] : optimizer.state())
    d.optimizer[name] = {info_of(params, name.substr(name.find('/') + 1)).shape.vec(), v};
  d.state = std::move(state);
  return d;
}

ResumeCheck check_resume(const ResumePoint& from, const ckpt::ResumeExpectations& expected, const Experiment& x,
                         const std::map<std::string, std::string>& graph_hashes, int threads) {
  ResumeCheck check;
  const Json& st = from.data.state;
  check.saved = ckpt::check_resume_state(st, expected, from.path);
  check.differences = resume_differences(st, x, graph_hashes, threads);
  for (const auto& d : check.differences)
    if (d.cls == "refused")
      check.refused.push_back({Code::CKPT_040,
                               fmt::format("resume from {} refused: {} {} -> {}", from.path, d.what, d.from, d.to),
                               {},
                               {},
                               "resume with the selection the checkpoint was made with, or start a new run"});
  return check;
}

void load_checkpoint_tensors(const ResumePoint& from, ParamStore& params, Optimizer& optimizer) {
  auto bad_state = [&](const std::string& what) {
    return UserError(Code::CKPT_024, {}, fmt::format("checkpoint {}: {}", from.path, what));
  };
  for (auto& [path, values] : params.values) {
    auto it = from.data.model.find(path);
    if (it == from.data.model.end() || it->second.values.size() != values.size())
      throw bad_state("model.safetensors has no tensor `" + path + "` of the model's size");
    values = it->second.values;
  }
  for (auto& [name, values] : optimizer.state()) {
    auto it = from.data.optimizer.find(name);
    if (it == from.data.optimizer.end() || it->second.values.size() != values.size())
      throw bad_state("optimizer.safetensors has no tensor `" + name + "` of the right size");
    values = it->second.values;
  }
}

}  // namespace sx
