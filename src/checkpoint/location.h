#pragma once
// Claiming a run's checkpoint location before the first step (checkpoints.md,
// "Before the first step"): the location is proven usable (a probe is written
// and deleted), a fresh run is refused where checkpoints of its slug already
// are, and the run folder is locked against a second run of the same slug.
#include <memory>
#include <string>

#include "checkpoint/store.h"
#include "util/environment.h"

namespace sx::ckpt {

// Held for the whole run; released (the lock given up) when destroyed.
class RunLock {
 public:
  virtual ~RunLock() = default;
  // Renews a lease-based lock (S3) so a long run keeps it; nothing locally,
  // where the lock lives as long as the process.
  virtual void refresh() {}
};

// How long an S3 lock object holds off another run after its last refresh.
inline constexpr int64_t kS3LockLeaseSeconds = 600;

// Proves, locks and checks `store` (the run folder of one slug), in that order:
//  - E-CKPT-050 when a probe cannot be written into the run folder and deleted
//    (local: not a folder, cannot be created, read-only; S3: the endpoint, the
//    credentials, the bucket or the write permission, the S3 error named);
//  - E-CKPT-052 when another process holds the run folder's lock, naming its
//    pid and host;
//  - E-CKPT-051 when `resuming` is false and the folder holds a complete
//    checkpoint already, naming it.
std::unique_ptr<RunLock> claim_location(CheckpointStore& store, bool resuming);
std::unique_ptr<RunLock> claim_location(const Location& location, const std::string& slug, bool resuming);

// The lock file (local) or lock folder (S3) in the run folder.
inline constexpr const char* kLockName = ".lock";

}  // namespace sx::ckpt
