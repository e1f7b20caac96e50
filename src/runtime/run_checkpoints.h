#pragma once
// A run's checkpoints (checkpoints.md): the location claimed before the first
// step, its store opened once for the whole run, the checkpoint to resume
// from and the checks of a resume (the tensors are moved by the device:
// run_device.h).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "checkpoint/location.h"
#include "checkpoint/resume_state.h"
#include "runtime/records.h"
#include "runtime/resume.h"
#include "util/environment.h"
#include "util/error.h"

namespace sx {

// The checkpoint a run resumes from, read whole before the first step.
struct ResumePoint {
  std::string path;
  int64_t step = 0;
  ckpt::CheckpointData data;
};

class RunCheckpoints {
 public:
  // `location` is --checkpoint-dir; none: the run writes no checkpoints.
  explicit RunCheckpoints(std::optional<Location> location) : location_(std::move(location)) {}
  bool enabled() const { return location_.has_value(); }

  // Opens the run folder's store and claims it (ckpt::claim_location): held to the end.
  void claim(const std::string& slug, bool resuming);
  // At a step or pass boundary: renews the lock's lease (S3); E-CKPT-056 when another run took it over.
  void renew_lock() {
    if (lock_) lock_->renew();
  }
  // The run line's `checkpoints` field: "-", "<location>" or "<location> every <n>".
  std::string text(const std::optional<int64_t>& every) const;

  // Reads the checkpoint `from` names; returns the run line's `resume` field
  // ("latest=none" when --resume latest finds none: the run starts fresh).
  std::string locate(const ResumeFrom& from);
  const std::optional<ResumePoint>& resume() const { return resume_; }
  // On a node other than node 0: the checkpoint node 0 read (node_resume.h).
  void adopt(ResumePoint point) { resume_ = std::move(point); }

  // Writes `data`, then keeps the newest `keep` when set.
  ckpt::WriteResult write(const ckpt::CheckpointData& data, const std::optional<int64_t>& keep);

 private:
  std::optional<Location> location_;
  std::unique_ptr<ckpt::CheckpointStore> store_;  // opened by claim()
  std::unique_ptr<ckpt::RunLock> lock_;           // held from before the first step to the end
  std::optional<ResumePoint> resume_;
};

// The records a hosted metrics target had not had acknowledged when the
// checkpoint was written (state.json's "unacknowledged_records"), so that a
// resume on another machine still delivers them.
void keep_unacknowledged(Json& state, const Json& unacknowledged);
Json kept_unacknowledged(const ResumePoint& from);

// A resume's checks, before anything is restored: state.json against this run
// (ckpt::check_resume_state, which throws E-CKPT-053), the knobs that differ,
// and the refusals (E-CKPT-040) among them, naming the checkpoint.
struct ResumeCheck {
  ckpt::ResumeState saved;
  std::vector<ResumeDifference> differences;
  std::vector<Diagnostic> refused;
};
ResumeCheck check_resume(const ResumePoint& from, const ckpt::ResumeExpectations& expected, const Experiment& x,
                         const std::map<std::string, std::string>& graph_hashes, int threads);

}  // namespace sx
