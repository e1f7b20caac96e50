// Checking state.json's meaning for a resume (resume_state.h). Every read goes
// through a checked accessor, so no nlohmann exception can escape: a missing
// field, a wrong type or a value out of range is E-CKPT-053.
#include "checkpoint/resume_state.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "util/error.h"

namespace sx::ckpt {
namespace {

using Json = nlohmann::ordered_json;

std::string shown(const Json& v) {
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

class Checker {
 public:
  explicit Checker(const std::string& where) : where_(where) {}

  [[noreturn]] void refuse(const std::string& field, const std::string& expected, const std::string& found) const {
    throw UserError(Code::CKPT_053, {},
                    fmt::format("{}: expected {} to be {}, found {}", where_, field, expected, found),
                    "the checkpoint's state.json was changed after it was written; resume from another "
                    "checkpoint, or start a new run");
  }

  const Json& field(const Json& obj, const std::string& name, const std::string& path) const {
    auto it = obj.find(name);
    if (it == obj.end()) refuse(path, "present", "no such field");
    return *it;
  }

  const Json& object(const Json& v, const std::string& path) const {
    if (!v.is_object()) refuse(path, "an object", shown(v));
    return v;
  }

  const Json& array(const Json& v, const std::string& path) const {
    if (!v.is_array()) refuse(path, "an array", shown(v));
    return v;
  }

  std::string string(const Json& v, const std::string& path) const {
    if (!v.is_string()) refuse(path, "a string", shown(v));
    return v.get<std::string>();
  }

  // An integer in [lo, hi]; a float, a boolean or an out-of-range number is refused.
  int64_t integer(const Json& v, const std::string& path, int64_t lo, int64_t hi) const {
    std::string expected = fmt::format("an integer from {} to {}", lo, hi);
    if (v.is_number_unsigned()) {
      uint64_t u = v.get<uint64_t>();
      // nlohmann reads a non-negative literal as unsigned: the lower bound holds for it too.
      if (u > static_cast<uint64_t>(hi) || static_cast<int64_t>(u) < lo) refuse(path, expected, shown(v));
      return static_cast<int64_t>(u);
    }
    if (!v.is_number_integer()) refuse(path, expected, shown(v));
    int64_t i = v.get<int64_t>();
    if (i < lo || i > hi) refuse(path, expected, shown(v));
    return i;
  }

  double finite(const Json& v, const std::string& path) const {
    if (!v.is_number()) refuse(path, "a finite number", shown(v));
    double d = v.get<double>();
    if (!std::isfinite(d) || std::fabs(d) > 3.4e38) refuse(path, "a finite number", shown(v));
    return d;
  }

  // A loader position's shape; what it means for the data is the stream's check.
  void position(const Json& p, const std::string& path) const {
    object(p, path);
    string(field(p, "loader", path + ".loader"), path + ".loader");
    const Json& seed = field(p, "seed", path + ".seed");
    if (!seed.is_number_unsigned() && !(seed.is_number_integer() && seed.get<int64_t>() >= 0))
      refuse(path + ".seed", "a non-negative integer", shown(seed));
    const Json& shuffle = field(p, "shuffle", path + ".shuffle");
    if (!shuffle.is_boolean()) refuse(path + ".shuffle", "true or false", shown(shuffle));
    int64_t windows = integer(field(p, "windows", path + ".windows"), path + ".windows", 1, kMaxCounter);
    integer(field(p, "epoch", path + ".epoch"), path + ".epoch", 0, kMaxCounter / windows);
    integer(field(p, "index", path + ".index"), path + ".index", 0, windows - 1);
    if (auto it = p.find("shard"); it != p.end()) string(*it, path + ".shard");
    if (auto it = p.find("offset"); it != p.end()) integer(*it, path + ".offset", 0, INT64_MAX);
  }

 private:
  const std::string& where_;
};

bool one_of(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + ("`" + n + "`");
  return out.empty() ? "none" : out;
}

}  // namespace

ResumeState check_resume_state(const Json& state, const ResumeExpectations& expected, const std::string& where) {
  Checker c(where);
  c.object(state, "state.json");
  ResumeState r;
  r.step = c.integer(c.field(state, "step", "step"), "step", 0, kMaxCounter);

  const Json& counters = c.object(c.field(state, "counters", "counters"), "counters");
  r.records = c.integer(c.field(counters, "records", "counters.records"), "counters.records", 0, kMaxCounter);
  r.tokens = c.integer(c.field(counters, "tokens", "counters.tokens"), "counters.tokens", 0, kMaxCounter);
  if (r.records > r.tokens)
    c.refuse("counters.tokens", fmt::format("at least counters.records ({})", r.records), std::to_string(r.tokens));

  r.stage = c.integer(c.field(state, "stage", "stage"), "stage", 0, std::max<int64_t>(expected.stages, 1) - 1);

  r.loader = c.string(c.field(state, "loader", "loader"), "loader");
  if (!one_of(expected.loaders, r.loader))
    c.refuse("loader", "one of this run's loaders (" + listed(expected.loaders) + ")", shown(Json(r.loader)));

  const Json& loaders = c.object(c.field(state, "loaders", "loaders"), "loaders");
  for (const auto& name : expected.loaders) {
    std::string path = "loaders." + name;
    const Json& p = c.field(loaders, name, path);
    c.position(p, path);
    if (const Json& l = c.field(p, "loader", path + ".loader"); l != name)
      c.refuse(path + ".loader", shown(Json(name)), shown(l));
    r.positions.emplace_back(name, p);
  }

  // A pass no longer in the file was removed by its author: it is not due any more.
  std::set<std::string> seen;
  for (const Json& p : c.array(c.field(state, "passes_due", "passes_due"), "passes_due")) {
    std::string name = c.string(p, "passes_due[]");
    if (!seen.insert(name).second) c.refuse("passes_due", "each pass at most once", shown(p) + " twice");
    if (one_of(expected.passes, name)) r.passes_due.push_back(name);
  }

  const Json& loss = c.field(state, "train_loss", "train_loss");
  if (!loss.is_null()) r.train_loss = static_cast<float>(c.finite(loss, "train_loss"));
  if (r.step > 0 && !r.train_loss) c.refuse("train_loss", "a finite number after step 0", shown(loss));

  for (const auto& [name, v] : c.object(c.field(state, "eval", "eval"), "eval").items())
    r.eval.emplace_back(name, c.finite(v, "eval." + name));

  // Optional: written only by a run that stopped on a failed metrics write.
  if (auto it = state.find("unwritten_records"); it != state.end())
    for (const Json& rec : c.array(*it, "unwritten_records")) {
      c.object(rec, "unwritten_records[]");
      c.string(c.field(rec, "kind", "unwritten_records[].kind"), "unwritten_records[].kind");
      r.unwritten.push_back(rec);
    }

  // Read by resume_differences: optional (older checkpoints), typed when there.
  if (auto it = state.find("graph"); it != state.end()) c.string(*it, "graph");
  if (auto it = state.find("threads"); it != state.end()) c.integer(*it, "threads", 1, 1 << 20);
  if (auto it = state.find("knobs"); it != state.end()) {
    for (const Json& k : c.array(*it, "knobs")) {
      c.object(k, "knobs[]");
      c.string(c.field(k, "name", "knobs[].name"), "knobs[].name");
    }
  }
  if (auto it = state.find("optimizer"); it != state.end() && !it->is_string() && !it->is_object())
    c.refuse("optimizer", "an object or a string", shown(*it));
  return r;
}

}  // namespace sx::ckpt
