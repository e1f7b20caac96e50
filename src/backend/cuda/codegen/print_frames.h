#pragma once
// The printer's scopes (print_cuda.cpp): a tree of frames, each a block of
// code with the variables defined in it. A value is printed into the
// deepest frame among those of the coordinates it depends on, so it is
// computed once per iteration of the loops it needs and no more; a loop or
// an `if` is a child frame whose text is appended to its parent's when it
// closes (after whatever its parent received meanwhile: values hoisted out
// of it are printed before it).
#include <map>
#include <string>
#include <vector>

#include "util/error.h"

namespace sx::cuda::codegen::detail {

class Frames {
 public:
  Frames() { frames_.push_back({"", "", -1, 0, {}}); }

  // A child of `parent` headed by `header` ("for (...)", "if (...)").
  int open(int parent, std::string header) {
    frames_.push_back({std::move(header), "", parent, frames_[parent].depth + 1, {}});
    return static_cast<int>(frames_.size()) - 1;
  }
  void close(int f) {
    Frame& fr = frames_[f];
    std::string pad = indent(fr.depth - 1);
    frames_[fr.parent].code += pad + fr.header + " {\n" + fr.code + pad + "}\n";
    fr.code.clear();
    fr.closed = true;
  }
  void set_header(int f, std::string header) { frames_[f].header = std::move(header); }
  int parent(int f) const { return frames_[f].parent; }
  void line(int f, const std::string& text) { frames_[f].code += indent(frames_[f].depth) + text + "\n"; }
  const std::string& code(int f) const { return frames_[f].code; }

  // A new variable name defined in frame f.
  std::string var(int f, const std::string& prefix) {
    std::string name = prefix + std::to_string(next_++);
    owner_[name] = f;
    return name;
  }
  // Registers `name` (defined by the caller) as living in frame f.
  void own(int f, const std::string& name) { owner_[name] = f; }

  // The deepest frame among the names' (literals and unknown names: the root).
  int deepest(const std::vector<std::string>& names) const {
    int best = 0;
    for (const auto& n : names) {
      auto it = owner_.find(n);
      if (it != owner_.end() && frames_[it->second].depth > frames_[best].depth) best = it->second;
    }
    return best;
  }

  // A memoised value: looked up in f and its ancestors, stored in f.
  const std::string* find(int f, const std::string& key) const {
    for (int at = f; at >= 0; at = frames_[at].parent) {
      auto it = frames_[at].memo.find(key);
      if (it != frames_[at].memo.end()) return &it->second;
    }
    return nullptr;
  }
  void remember(int f, const std::string& key, const std::string& name) { frames_[f].memo[key] = name; }

 private:
  struct Frame {
    std::string header, code;
    int parent, depth;
    std::map<std::string, std::string> memo;
    bool closed = false;
  };
  static std::string indent(int depth) {
    return std::string(2 * static_cast<size_t>(depth + 2), ' ');
  }  // in the unit loop
  std::vector<Frame> frames_;
  std::map<std::string, int> owner_;
  int next_ = 0;
};

}  // namespace sx::cuda::codegen::detail
