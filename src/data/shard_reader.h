#pragma once
// Reading one shard: a small interface so that other kinds of storage (an S3
// object read with ranged GETs) can stand beside local files later.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace sx::data {

// One shard of a source, as resolved from a path, a glob or a manifest.
struct ShardRef {
  std::string uri;                    // a local path (absolute or relative to the cwd) or s3://bucket/key
  std::string display;                // how errors name it
  std::optional<uint64_t> bytes;      // from a .manifest.json: checked when present
  std::optional<std::string> sha256;  // lowercase hex, from a .manifest.json
};

class ShardReader {
 public:
  virtual ~ShardReader() = default;
  virtual const std::string& name() const = 0;  // how errors name the shard
  virtual uint64_t size() const = 0;
  // Reads bytes [offset, offset + n) into out; throws E-DATA-013 on failure.
  virtual void read(uint64_t offset, size_t n, char* out) = 0;
};

// Opens a local file; E-DATA-001 when missing, E-DATA-013 when unreadable or
// a directory, E-DATA-030 when not a regular file (a FIFO, a device: never
// blocks on one),
// s3://bucket/key with ranged GETs and an 8 MiB read-ahead (the data role's client).
std::unique_ptr<ShardReader> open_shard(const ShardRef& ref);

// A shard held in memory (tests, fuzzing).
std::unique_ptr<ShardReader> memory_shard(std::string name, std::string bytes);

// The whole shard as one string. When `stop` becomes true between two chunks
// the read ends with E-DATA-013 (the caller sees the pending signal).
std::string read_all(ShardReader& r, const std::atomic<bool>* stop = nullptr);

}  // namespace sx::data
