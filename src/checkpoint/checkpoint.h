#pragma once
// Checkpoints (checkpoints.md): writing one atomically, finding the newest
// complete one, keeping the newest k, and reading one back with every file's
// SHA-256 checked. The layout of one run's checkpoints:
//
//   <location>/<slug>/step-<n>/
//     model.safetensors       parameters by model path, F32
//     optimizer.safetensors   optimizer state ("adamw.m/<path>", ...)
//     state.json              what the runtime gives, plus step and
//                             files: {name: sha256} of the two tensor files
//     COMPLETE                "<sha256 of state.json>  state.json\n", written
//     last
//
// A checkpoint is written into `step-<n>.partial-<pid>/` and renamed to
// `step-<n>` only when complete; an existing complete `step-<n>` is first
// renamed aside to `step-<n>.old-<pid>` and deleted after. Leftover
// `.partial-*` and `.old-*` folders are ignored by readers and cleaned by the
// next successful write.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "checkpoint/safetensors.h"
#include "checkpoint/store.h"
#include "util/environment.h"
#include "util/sha256.h"

namespace sx::ckpt {

struct CheckpointData {
  int64_t step = 0;
  st::Tensors model;
  st::Tensors optimizer;
  // state.json: whatever the runtime keeps. On writing, "step" is set to `step`
  // and "files" to the tensor files' SHA-256; on reading, it is the file as
  // written, "files" included.
  nlohmann::ordered_json state = nlohmann::ordered_json::object();
};

struct WriteResult {
  std::string path;   // "ckpt/my-run/step-10", as the `checkpoint` line shows it
  int64_t bytes = 0;  // of all four files
  double seconds = 0;
};

// Writes `data` as `<location>/<slug>/step-<data.step>`, atomically. E-CKPT-020
// (path and the system's reason) when it fails; the previous checkpoints are
// intact then and nothing of the new one is visible. In S3 (a store that
// writes_in_place) the objects go straight into step-<n>/, COMPLETE last.
WriteResult write_checkpoint(const Location& location, const std::string& slug, const CheckpointData& data);
WriteResult write_checkpoint(CheckpointStore& store, const CheckpointData& data);

// Deletes all but the newest `keep` complete checkpoints (none when keep <= 0),
// and incomplete step-<n> folders older than the oldest one kept. Call it after
// a write: the newest is complete by then. E-CKPT-020 when a delete fails.
void keep_newest(const Location& location, const std::string& slug, int64_t keep);
void keep_newest(CheckpointStore& store, int64_t keep);

// The newest complete checkpoint of run `slug` (by n, numerically), as a path
// "<location>/<slug>/step-<n>"; nullopt when there is none, or no run folder.
// Folders without COMPLETE and `.partial-*` ones are ignored. E-CKPT-027 when
// the run folder cannot be listed.
std::optional<std::string> find_latest(const Location& location, const std::string& slug);
// The same in a store: the folder's name ("step-12").
std::optional<std::string> find_latest(const CheckpointStore& store);

// Reads a checkpoint folder ("ckpt/my-run/step-10"). Refuses, naming the path:
// E-CKPT-021 no such folder, E-CKPT-022 no COMPLETE (or not ours), E-CKPT-023 a
// file missing, unreadable or whose SHA-256 disagrees (checked before parsing),
// E-CKPT-024 a bad state.json, E-CKPT-025 a step-<n> name that disagrees with
// state.json's step, E-CKPT-001..006 a tensor file that hashes right but is not
// safetensors. An s3://bucket/prefix/slug/step-<n> is read with the checkpoint
// role's client (s3::client_for).
CheckpointData read_checkpoint(const std::string& dir);
CheckpointData read_checkpoint(const CheckpointStore& store, const std::string& folder);

// state.json's bytes parsed and checked: an object, "step" a non-negative
// integer, "files" an object of name -> 64 lowercase hex digits naming both
// tensor files. E-CKPT-024 naming `where` otherwise. Never crashes on any
// input.
nlohmann::ordered_json parse_state(std::string_view bytes, const std::string& where);

// n of a folder named exactly "step-<n>" (digits, no sign, fits int64), else
// nullopt.
std::optional<int64_t> step_of_folder(std::string_view name);

// The file names of a checkpoint.
inline constexpr const char* kModelFile = "model.safetensors";
inline constexpr const char* kOptimizerFile = "optimizer.safetensors";
inline constexpr const char* kStateFile = "state.json";
inline constexpr const char* kCompleteFile = "COMPLETE";

}  // namespace sx::ckpt
