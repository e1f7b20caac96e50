#pragma once
// A run's jsonl metrics file read as one history (docs/metrics.md): the
// segments it holds, and for each step and each (pass, step) the record of the
// latest segment, so a resumed run's re-run steps replace the earlier ones.
// What `sweep`'s table and `report` read, so both apply the same rule.
#include <cstdint>
#include <istream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace sx::records {

using Json = nlohmann::ordered_json;

// One session's part of the file, from its `meta` record to the next.
struct Segment {
  Json meta;                              // the segment's meta record
  std::optional<int64_t> resumed_from;    // the checkpoint's step, when it resumed
  double elapsed_s = 0;                   // the largest elapsed_s of its records
  int64_t first_step = 0, last_step = 0;  // of its step records; 0 when it has none
};

struct History {
  std::vector<Segment> segments;
  std::map<int64_t, Json> steps;                           // step -> its latest `step` record
  std::map<std::string, std::map<int64_t, Json>> evals;    // pass -> step -> its latest `eval` record
  std::map<std::pair<std::string, int64_t>, Json> events;  // (event, step) -> the latest such event
  std::optional<Json> summary;                             // the last summary record
  std::string ended;   // how the last segment ended: done, stopped, failed; "" when it wrote no end
  size_t records = 0;  // lines that were records
  bool empty() const { return records == 0; }
};

// Lines that are not whole JSON objects with a `kind` (a line cut by a hard
// kill, a line being written) are skipped.
History read_history(std::istream& in);

// A number field of a record, or nothing when it is absent or not a number.
std::optional<double> number(const Json& record, const std::string& key);
std::string text(const Json& record, const std::string& key);

}  // namespace sx::records
