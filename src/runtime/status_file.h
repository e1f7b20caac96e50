#pragma once
// The status file (outputs.md, "The status file"): replaced atomically
// (temporary file in the same folder, fsync, rename), never written in place.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace sx {

using Json = nlohmann::ordered_json;

class StatusFile {
 public:
  // Refuses (E-ENV-010) a path that names something other than a regular file,
  // follows a symbolic link to its target, and removes the temporary files a
  // killed run left beside it. `source` is "--status" or "SEXPGPU_STATUS".
  StatusFile(const std::optional<std::string>& path, const std::string& source);
  bool enabled() const { return !path_.empty(); }
  // Replaces the file with `status`; an error writing it is reported once on
  // standard error and otherwise ignored: the status file must never stop a run.
  // `if_killed` is what a second stopping signal, which exits at once, leaves in it.
  void write(const Json& status, const Json* if_killed = nullptr);
  // As given on the command line.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string target_;  // the file replaced: path_, or what its symbolic link points to
  std::string temp_;    // <target>.tmp-<pid>
  bool warned_ = false;
};

}  // namespace sx
