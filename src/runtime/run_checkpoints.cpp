#include "runtime/run_checkpoints.h"

#include <algorithm>

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

void keep_unacknowledged(Json& state, const Json& unacknowledged) {
  if (unacknowledged.is_array() && !unacknowledged.empty()) state["unacknowledged_records"] = unacknowledged;
}

Json kept_unacknowledged(const ResumePoint& from) {
  return from.data.state.value("unacknowledged_records", Json::array());
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

}  // namespace sx
