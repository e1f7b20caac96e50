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

// Proves, locks and checks `store` (the run folder of one slug), in that order:
//  - E-CKPT-050 when a probe cannot be written into the run folder and deleted
//    (local: not a folder, cannot be created, read-only; S3: the endpoint, the
//    credentials, the bucket or the write permission, the S3 error named);
//  - E-CKPT-052 when another process holds the run folder's lock, naming its
//    pid and host (a local run folder: flock; S3: a lease object);
//  - E-CKPT-051 when `resuming` is false and the folder holds a complete
//    checkpoint already, naming it.
std::unique_ptr<RunLock> claim_location(CheckpointStore& store, bool resuming);
std::unique_ptr<RunLock> claim_location(const Location& location, const std::string& slug, bool resuming);

// The lock file in a local run folder.
inline constexpr const char* kLockName = ".lock";

}  // namespace sx::ckpt
