#pragma once
// On several nodes node 0 alone reads the checkpoint a run resumes from and
// sends it to every other node, so that they need no access to its disk or
// bucket (docs/nodes.md).
#include <string>

#include "runtime/communicator.h"
#include "runtime/run_checkpoints.h"

namespace sx {

// Node 0: checkpoints.locate(from), then its result sent; the others: the
// result received and adopted. Returns the run line's `resume` field.
std::string share_resume(Communicator& comm, RunCheckpoints& checkpoints, const ResumeFrom& from);

}  // namespace sx
