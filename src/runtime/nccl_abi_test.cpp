// Our declarations of NCCL (nccl_api.h) against the toolkit's nccl.h, where
// it is installed: sizes, values, and each entry point's parameter and result
// sizes (handles are distinct types on either side).
#include "runtime/nccl_api.h"
// clang-format off
#ifdef SEXPGPU_HAVE_NCCL_H
#include <nccl.h>
#endif
// clang-format on
#include <gtest/gtest.h>

#ifdef SEXPGPU_HAVE_NCCL_H
namespace n = sx::nccl;

static_assert(sizeof(n::Result) == sizeof(ncclResult_t));
static_assert(sizeof(n::Comm) == sizeof(ncclComm_t));
static_assert(sizeof(n::Stream) == sizeof(cudaStream_t));
static_assert(sizeof(n::UniqueId) == sizeof(ncclUniqueId));
static_assert(sizeof(n::DataType) == sizeof(ncclDataType_t));
static_assert(sizeof(n::RedOp) == sizeof(ncclRedOp_t));
static_assert(n::kSuccess == ncclSuccess);
static_assert(n::kSystemError == ncclSystemError);
static_assert(n::kInternalError == ncclInternalError);
static_assert(n::kRemoteError == ncclRemoteError);
static_assert(n::kInProgress == ncclInProgress);
static_assert(n::kUint8 == ncclUint8);
static_assert(n::kFloat32 == ncclFloat32);
static_assert(n::kBfloat16 == ncclBfloat16);
static_assert(n::kSum == ncclSum);

template <typename R, typename... A>
constexpr size_t signature_size(R (*)(A...)) {
  return ((sizeof(A) * 1000) + ... + 0) + sizeof(R) * 100 + sizeof...(A);
}
#define SAME_SHAPE(slot, fn) static_assert(signature_size(decltype(n::Api::slot){}) == signature_size(&fn), #fn)
SAME_SHAPE(get_version, ncclGetVersion);
SAME_SHAPE(get_error_string, ncclGetErrorString);
SAME_SHAPE(get_last_error, ncclGetLastError);
SAME_SHAPE(get_unique_id, ncclGetUniqueId);
SAME_SHAPE(comm_init_all, ncclCommInitAll);
SAME_SHAPE(comm_init_rank, ncclCommInitRank);
SAME_SHAPE(comm_destroy, ncclCommDestroy);
SAME_SHAPE(comm_abort, ncclCommAbort);
SAME_SHAPE(comm_get_async_error, ncclCommGetAsyncError);
SAME_SHAPE(all_gather, ncclAllGather);
SAME_SHAPE(all_reduce, ncclAllReduce);
SAME_SHAPE(broadcast, ncclBroadcast);
SAME_SHAPE(group_start, ncclGroupStart);
SAME_SHAPE(group_end, ncclGroupEnd);
#undef SAME_SHAPE

TEST(NcclAbi, DeclarationsMatchTheToolkitsNcclH) {
  // The checks are the static_asserts above; this records that they ran.
  EXPECT_EQ(NCCL_MAJOR, 2);
}
#else
TEST(NcclAbi, DeclarationsMatchTheToolkitsNcclH) { GTEST_SKIP() << "no nccl.h in this build's CUDA toolkit"; }
#endif
