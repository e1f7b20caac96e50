#pragma once
// A training stream's position: plain data, part of every checkpoint.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace sx::data {

struct Position {
  std::string loader;  // the loader's name (keys its shuffle stream)
  uint64_t seed = 0;   // the run's seed the shuffle is drawn from
  bool shuffle = false;
  int64_t windows = 0;  // windows in the source: a check that the data is the same
  int64_t epoch = 0;    // epochs completed
  int64_t index = 0;    // windows taken in this epoch (0 <= index < windows)
  // Informational (written, not read back): the shard and token offset in it
  // of the next window.
  std::string shard;
  int64_t offset = 0;

  // Training records consumed since the start: epoch * windows + index.
  int64_t records() const { return epoch * windows + index; }
  bool operator==(const Position&) const = default;
};

nlohmann::ordered_json position_to_json(const Position& p);
// Throws E-DATA-014 when `j` is not a position.
Position position_from_json(const nlohmann::ordered_json& j);
Position position_from_json(const nlohmann::json& j);

// The counters of outputs.md: records consumed and their tokens, seq-len + 1 a record.
struct Counters {
  int64_t records = 0, tokens = 0;
  void add(int64_t n, int64_t seq_len) { records += n, tokens += n * (seq_len + 1); }
};

}  // namespace sx::data
