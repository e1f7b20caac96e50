#pragma once
// Shared by the checkpoint tests: a scratch folder, sample checkpoints, and
// reading and rewriting files in a checkpoint folder by hand.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "checkpoint/checkpoint.h"
#include "util/error.h"

namespace sx::ckpt::testing {

namespace fs = std::filesystem;

// A fresh folder under the system's temporary folder, deleted at the end.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "sx_ckpt_XXXXXX").string();
    SX_ASSERT(::mkdtemp(tmpl.data()) != nullptr, "mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  Location location() const { return Location{path_, false, {}, {}}; }

 private:
  std::string path_;
};

// A small checkpoint whose values depend on `step` and `salt`.
inline CheckpointData sample(int64_t step, float salt = 0) {
  CheckpointData d;
  d.step = step;
  d.model["layer/w"] = {{2, 3}, {1, 2, 3, 4, 5, 6}};
  d.model["layer/b"] = {{3}, {0.5f, -0.25f, static_cast<float>(step) + salt}};
  d.optimizer["adamw.m/layer/w"] = {{2, 3}, {0, 0, 0, 0, 0, static_cast<float>(step)}};
  d.optimizer["adamw.v/layer/w"] = {{2, 3}, {1e-8f, 0, 0, 0, 0, salt}};
  d.state = {{"slug", "my-run"}, {"counters", {{"records", step * 8}}}, {"rng", {1, 2, 3}}};
  return d;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Rewrites a checkpoint's state.json and the COMPLETE that vouches for it.
inline void rewrite_state(const std::string& dir, const std::string& text) {
  spit(dir + "/state.json", text);
  spit(dir + "/COMPLETE", sha256_hex(text) + "  state.json\n");
}

// The code of the UserError `f` throws; fails the test when it throws none.
template <typename F>
std::string code_of(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return code_info(e.code()).name;
  }
  ADD_FAILURE() << "expected a UserError";
  return "";
}

// The message of the UserError `f` throws, or "".
template <typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.diagnostics().front().message;
  }
  return "";
}

// The names in a folder, sorted.
inline std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace sx::ckpt::testing
