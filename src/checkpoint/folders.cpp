// Folder names and the SHA-256 every checkpoint file is checked against.
#include "checkpoint/folders.h"

#include <unistd.h>

#include <charconv>

#include "checkpoint/checkpoint.h"
#include "util/error.h"

namespace sx::ckpt {

std::optional<int64_t> step_of_folder(std::string_view name) {
  if (!name.starts_with("step-")) return std::nullopt;
  std::string_view digits = name.substr(5);
  if (digits.empty() || digits.size() > 19) return std::nullopt;
  for (char c : digits)
    if (c < '0' || c > '9') return std::nullopt;
  int64_t n = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return n;
}

std::optional<FolderName> parse_folder(std::string_view name) {
  size_t dot = name.find('.');
  auto step = step_of_folder(name.substr(0, dot));
  if (!step) return std::nullopt;
  if (dot == std::string_view::npos) return FolderName{*step, FolderKind::step};
  std::string_view suffix = name.substr(dot);
  if (suffix.starts_with(".partial-")) return FolderName{*step, FolderKind::partial};
  if (suffix.starts_with(".old-")) return FolderName{*step, FolderKind::old};
  return std::nullopt;
}

std::string step_folder(int64_t step) { return "step-" + std::to_string(step); }
std::string partial_folder(int64_t step) {
  return step_folder(step) + ".partial-" + std::to_string(::getpid());
}
std::string old_folder(int64_t step) { return step_folder(step) + ".old-" + std::to_string(::getpid()); }

}  // namespace sx::ckpt
