// A run folder in memory: the same primitives as a local folder, no disk. The
// fuzzer reads checkpoints from it, and tests use it to build folders by hand.
#include <map>

#include "checkpoint/store.h"
#include "util/error.h"

namespace sx::ckpt {
namespace {

class MemoryStore final : public CheckpointStore {
 public:
  explicit MemoryStore(std::string root) : root_(std::move(root)) {}

  std::string where(const std::string& folder) const override {
    return "mem:" + (folder.empty() ? root_ : root_ + "/" + folder);
  }

  std::vector<std::string> list() const override {
    std::vector<std::string> out;
    for (const auto& [name, files] : folders_) out.push_back(name);
    return out;
  }

  bool exists(const std::string& folder, const std::string& name) const override {
    auto it = folders_.find(folder);
    return it != folders_.end() && (name.empty() || it->second.count(name) > 0);
  }

  void put(const std::string& folder, const std::string& name, std::string_view bytes) override {
    folders_[folder][name] = std::string(bytes);
  }

  std::optional<std::string> read(const std::string& folder, const std::string& name) const override {
    auto it = folders_.find(folder);
    if (it == folders_.end()) return std::nullopt;
    auto file = it->second.find(name);
    if (file == it->second.end()) return std::nullopt;
    return file->second;
  }

  void rename(const std::string& from, const std::string& to) override {
    auto it = folders_.find(from);
    if (it == folders_.end() || folders_.count(to))
      throw UserError(Code::CKPT_020, {}, fmt::format("cannot rename {} to {}", where(from), where(to)));
    folders_[to] = std::move(it->second);
    folders_.erase(from);
  }

  void remove(const std::string& folder) override { folders_.erase(folder); }

 private:
  std::string root_;
  std::map<std::string, std::map<std::string, std::string>> folders_;
};

}  // namespace

std::unique_ptr<CheckpointStore> memory_store(const std::string& root) {
  return std::make_unique<MemoryStore>(root);
}

}  // namespace sx::ckpt
