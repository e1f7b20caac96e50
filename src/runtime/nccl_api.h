#pragma once
// NCCL (libnccl.so.2) as a table of entry points filled by dlopen/dlsym, as
// the CUDA driver is (backend/cuda/driver/driver.h): the binary has no
// link-time dependency on it, so a machine without NCCL starts, and "no NCCL
// here" is a value E-NODE-010 describes. The types are declared here, so no
// NCCL header is needed to build; nccl_abi_test.cpp checks them against
// nccl.h where it is installed.
//
// NCCL has no timeout of its own: a collective whose peer never comes spins
// on the GPU forever. The watchdog (watch_collective) polls each
// communicator's asynchronous error and the clock, and on an error or past
// SEXPGPU_NODE_TIMEOUT aborts every communicator (which ends the stuck
// kernels) and stops the run with E-NODE-011 — what PyTorch and XLA do.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sx::nccl {

// nccl.h's types, by size and value.
using Result = int;  // ncclResult_t
constexpr Result kSuccess = 0, kSystemError = 2, kInternalError = 3, kRemoteError = 6, kInProgress = 7;
struct OpaqueComm;
using Comm = OpaqueComm*;  // ncclComm_t
using Stream = void*;      // cudaStream_t, the driver's CUstream
struct UniqueId {
  char internal[128];
};
using DataType = int;  // ncclDataType_t
constexpr DataType kUint8 = 1, kFloat32 = 7, kBfloat16 = 9;
using RedOp = int;  // ncclRedOp_t
constexpr RedOp kSum = 0;

// The entry points sexpgpu calls.
struct Api {
  Result (*get_version)(int*);
  const char* (*get_error_string)(Result);
  const char* (*get_last_error)(Comm);
  Result (*get_unique_id)(UniqueId*);
  Result (*comm_init_all)(Comm*, int, const int*);
  Result (*comm_init_rank)(Comm*, int, UniqueId, int);
  Result (*comm_destroy)(Comm);
  Result (*comm_abort)(Comm);
  Result (*comm_get_async_error)(Comm, Result*);
  Result (*all_gather)(const void*, void*, size_t, DataType, Comm, Stream);
  Result (*all_reduce)(const void*, void*, size_t, DataType, RedOp, Comm, Stream);
  Result (*broadcast)(const void*, void*, size_t, DataType, int, Comm, Stream);
  Result (*group_start)();
  Result (*group_end)();
};

struct Library {
  std::unique_ptr<Api> api;  // null when none loaded
  std::string path;          // the file that loaded
  std::string failure;       // where it was looked for and why each failed
  int version = 0;           // ncclGetVersion: 22809 for 2.28.9
};

// libnccl.so.2 on the loader's path, then in the CUDA toolkit
// (/usr/local/cuda/lib64, /usr/local/cuda/lib, /usr/local/cuda-*/), then in a
// venv's nvidia/nccl/lib (NVIDIA's wheel).
std::vector<std::string> default_candidates();
// The first of `candidates` that loads with every entry point.
Library load(const std::vector<std::string>& candidates);
// load(default_candidates()) for this process, once.
const Library& library();
// The table of `lib`, or E-NODE-010 naming where NCCL was looked for.
const Api& require(const Library& lib);
// "2.28.9" from 22809.
std::string version_text(int version);

// The watchdog: returns once `done()` holds; throws E-NODE-011 (after
// aborting every communicator of `comms`) when NCCL reports an error on one
// of them, or when `timeout_s` passes first. `what` names the collective.
void watch_collective(const Api& api, const std::vector<Comm>& comms, double timeout_s,
                      const std::function<bool()>& done, const std::string& what);

}  // namespace sx::nccl
