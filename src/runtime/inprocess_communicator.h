#pragma once
// Several GPUs in one process (device_group.h): one Communicator per rank,
// each called by the thread that drives its device, meeting in memory. A
// collective waits for every rank at most `timeout_s` (SEXPGPU_NODE_TIMEOUT):
// a rank that does not come makes every waiting rank throw E-NODE-011 naming
// it, and so does every later collective — the group is then lost, as a
// Gloo context that threw is. A rank that fails on its own (its device ran
// out of memory) calls abandon() (a UserError is rethrown as it is), so that the others throw its error at once
// instead of waiting out the timeout.
#include <exception>
#include <memory>
#include <vector>

#include "runtime/communicator.h"

namespace sx {

// `ranks` communicators, rank r at index r, sharing one meeting place.
std::vector<std::unique_ptr<Communicator>> make_inprocess_communicators(int ranks, double timeout_s);

}  // namespace sx
