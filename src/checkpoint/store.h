#pragma once
// Where a run's checkpoints live: the folder `<location>/<slug>/` of one run,
// holding one `step-<n>/` folder per checkpoint (checkpoints.md). A store is a
// few primitives, so S3 can implement them too: put a file into a folder being
// written, list the folders, read a file, rename a folder, delete one. The
// atomic protocol on top of them (partial folder, COMPLETE last, rename) is in
// checkpoint_write.cpp, the same for every store.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/environment.h"

namespace sx::s3 {
class Client;
}

namespace sx::ckpt {

// A run folder's lock, held for the whole run; released when destroyed.
class RunLock {
 public:
  virtual ~RunLock() = default;
  // Called at step and pass boundaries: a lease is renewed here once it is
  // a quarter gone (S3); E-CKPT-056 when another run has taken the lock over.
  virtual void renew() {}
  // The lease renewed now, whatever its age. Not yet called before each
  // checkpoint: with it, e2e/s3_faults' kill -9 phase made the moto server
  // stop answering (docs/s3.md).
  virtual void confirm() {}
};

class CheckpointStore {
 public:
  virtual ~CheckpointStore() = default;

  // The run folder or a folder in it, as shown to the user:
  // "ckpt/my-run/step-10".
  virtual std::string where(const std::string& folder = {}) const = 0;

  // The names of the folders in the run folder ("step-10",
  // "step-12.partial-42"), unsorted; empty when the run folder does not exist
  // yet. E-CKPT-027 when it exists but cannot be listed.
  virtual std::vector<std::string> list() const = 0;

  // Whether `folder` exists (name empty), or the file `name` in it.
  virtual bool exists(const std::string& folder, const std::string& name = {}) const = 0;

  // Writes the file `name` into `folder` (created, with the run folder, when
  // missing) and makes it durable (fsync). The folder is one being written, not
  // yet visible as a checkpoint. E-CKPT-020 with the path and reason on
  // failure.
  virtual void put(const std::string& folder, const std::string& name, std::string_view bytes) = 0;

  // The whole file, or nullopt when it does not exist. E-CKPT-023 when it
  // exists but cannot be read.
  virtual std::optional<std::string> read(const std::string& folder, const std::string& name) const = 0;

  // Renames folder `from` to `to` (which must not exist) durably: what was put
  // into `from` is on disk before the rename, the rename is on disk after it.
  // E-CKPT-020 on failure.
  virtual void rename(const std::string& from, const std::string& to) = 0;

  // Deletes `folder` and everything in it, `COMPLETE` first, so a half-deleted
  // checkpoint is never taken for a complete one. Nothing when it does not
  // exist. E-CKPT-020 on failure.
  virtual void remove(const std::string& folder) = 0;

  // Whether renaming a folder is costly (S3: a copy of every object). Then a
  // checkpoint is written straight into its step-<n> folder, COMPLETE last, and
  // readers ignore it until COMPLETE is there (checkpoint_write.cpp).
  virtual bool writes_in_place() const { return false; }

  // The run folder's path when it is a local folder (which can be locked with
  // flock), else nullopt.
  virtual std::optional<std::string> local_path() const { return std::nullopt; }

  // Locks a run folder that is not local (S3: a lease object, lock_s3.h);
  // nullptr where there is nothing to lock (a store in memory).
  virtual std::unique_ptr<RunLock> lock() { return nullptr; }
};

// The store of run `slug` under a checkpoint location, local or s3:// (with the
// checkpoint role's client, s3::client_for: E-ENV-002 naming the missing
// variables when its credentials are incomplete).
std::unique_ptr<CheckpointStore> open_store(const Location& location, const std::string& slug);

// A run folder in S3: the objects under `<root>/` in `bucket` ("s3://b/<root>/step-10").
std::unique_ptr<CheckpointStore> s3_store(std::shared_ptr<s3::Client> client, const std::string& bucket,
                                          const std::string& root);
std::unique_ptr<CheckpointStore> s3_store(const Location& location, const std::string& slug);

// A local run folder, by path ("ckpt/my-run"); created on the first put.
std::unique_ptr<CheckpointStore> local_store(const std::string& root);

// A store in memory, for tests and the fuzzer; `where` shows "mem:<root>/...".
std::unique_ptr<CheckpointStore> memory_store(const std::string& root = "run");

}  // namespace sx::ckpt
