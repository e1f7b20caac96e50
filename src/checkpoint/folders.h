#pragma once
// The names of the folders in a run folder: `step-<n>` (a checkpoint, when it
// holds COMPLETE), `step-<n>.partial-<pid>` (one being written),
// `step-<n>.old-<pid>` (a replaced one, being deleted).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sx::ckpt {

enum class FolderKind { step, partial, old };

struct FolderName {
  int64_t step = 0;
  FolderKind kind = FolderKind::step;
};

// Any of the three forms; nullopt for any other name.
std::optional<FolderName> parse_folder(std::string_view name);

std::string step_folder(int64_t step);     // "step-12"
std::string partial_folder(int64_t step);  // "step-12.partial-<this pid>"
std::string old_folder(int64_t step);      // "step-12.old-<this pid>"

}  // namespace sx::ckpt
