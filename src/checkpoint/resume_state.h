#pragma once
// What a resume reads from a checkpoint's state.json, checked for its meaning
// before any of it is used: the integrity check (COMPLETE, the hashes) says the
// file is the one written, not that what was written makes sense to this run.
// A file re-sealed by hand (its hashes recomputed) must be refused with a code
// naming the field, never crash the process or resume inexactly.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace sx::ckpt {

// What this run can accept: its training loaders (a position is needed for
// each), its passes, its curriculum.
struct ResumeExpectations {
  std::vector<std::string> loaders;  // every training loader of the run
  std::vector<std::string> passes;   // every pass name
  int64_t stages = 1;                // curriculum stages (1 without a curriculum)
};

// The fields a resume restores, typed. `positions` maps each expected loader
// to its position object (shape checked; data::position_from_json and the
// stream's restore check it against the data).
struct ResumeState {
  int64_t step = 0;
  int64_t records = 0, tokens = 0;
  int64_t stage = 0;
  std::string loader;
  std::vector<std::pair<std::string, nlohmann::ordered_json>> positions;
  std::vector<std::string> passes_due;
  std::optional<float> train_loss;
  std::vector<std::pair<std::string, double>> eval;
  std::vector<nlohmann::ordered_json> unwritten;  // metrics records a failed write left out
};

// The largest counter a checkpoint may hold: far beyond any run, and far from
// int64's end so that continuing the run cannot overflow.
inline constexpr int64_t kMaxCounter = int64_t{1} << 53;

// Checks `state` (as read_checkpoint returns it: "step" and "files" already
// checked) and returns what a resume restores. E-CKPT-053 naming `where`, the
// field and what was expected and found, for any field missing, of the wrong
// type or out of range, including the optional ones that resume_differences
// reads (graph, threads, knobs, optimizer). Never throws anything else.
ResumeState check_resume_state(const nlohmann::ordered_json& state, const ResumeExpectations& expected,
                               const std::string& where);

}  // namespace sx::ckpt
