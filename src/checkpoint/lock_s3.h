#pragma once
// The lock of an S3 run folder, a lease object (lock_s3.cpp says how it works).
#include <cstdint>
#include <memory>
#include <string>

#include "checkpoint/store.h"

namespace sx::s3 {
class Client;
}

namespace sx::ckpt {

// How long a lock is good for without being renewed. The holder renews it at
// step boundaries once a quarter of it has gone; a run killed on another host
// blocks the location for at most this long (on the same host, not at all).
inline constexpr int64_t kS3LeaseSeconds = 600;

// Takes the lock object `key` in `bucket` (shown as `where`): E-CKPT-052 naming
// the holder while another run holds it; a stale one is taken over with a
// warning on stderr. Released (deleted, if still ours) when destroyed.
std::unique_ptr<RunLock> lock_s3(std::shared_ptr<s3::Client> client, const std::string& bucket, const std::string& key,
                                 const std::string& where, int64_t lease_s = kS3LeaseSeconds);

}  // namespace sx::ckpt
