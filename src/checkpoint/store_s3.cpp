// A run folder in S3: `s3://<bucket>/<prefix>/<slug>/`, a "folder" is a key
// prefix and a file an object. Renames are costly there (copy and delete), so
// the store writes in place: a checkpoint's objects go straight under
// `step-<n>/`, COMPLETE uploaded last (checkpoint_write.cpp), and a folder is
// deleted COMPLETE first, so readers never take a partial one for complete.
// Errors keep the S3 error's code and message inside the checkpoint one.
#include "checkpoint/location.h"
#include "checkpoint/lock_s3.h"
#include "checkpoint/store.h"
#include "s3/client.h"
#include "util/error.h"

namespace sx::ckpt {
namespace {

UserError wrap(Code code, const std::string& what, const UserError& e) {
  const Diagnostic& d = e.diagnostics().front();
  return UserError(code, {}, fmt::format("{}: {} {}", what, code_info(d.code).name, d.message),
                   d.help.empty() ? "the previous checkpoints are intact" : d.help);
}

class S3Store final : public CheckpointStore {
 public:
  S3Store(std::shared_ptr<s3::Client> client, std::string bucket, std::string root)
      : client_(std::move(client)), bucket_(std::move(bucket)), root_(std::move(root)) {}

  bool writes_in_place() const override { return true; }

  std::unique_ptr<RunLock> lock() override {
    try {
      return lock_s3(client_, bucket_, key({}, kLockName), where({}) + "/" + kLockName);
    } catch (const UserError& e) {
      if (e.diagnostics().front().code == Code::CKPT_052) throw;
      throw wrap(Code::CKPT_050, "cannot lock the checkpoint location " + where({}), e);
    }
  }

  std::string where(const std::string& folder) const override {
    std::string k = key(folder, {});
    if (k.ends_with('/')) k.pop_back();
    return "s3://" + bucket_ + (k.empty() ? "" : "/" + k);
  }

  std::vector<std::string> list() const override {
    std::string base = key({}, {});
    try {
      std::vector<std::string> out;
      for (const std::string& p : client_->list(bucket_, base, "/").prefixes)
        if (p.size() > base.size() + 1) out.push_back(p.substr(base.size(), p.size() - base.size() - 1));
      return out;
    } catch (const UserError& e) {
      throw wrap(Code::CKPT_027, "cannot list the checkpoint folder " + where({}), e);
    }
  }

  bool exists(const std::string& folder, const std::string& name) const override {
    try {
      if (!name.empty()) return client_->head(bucket_, key(folder, name)).has_value();
      return !client_->list(bucket_, key(folder, {})).objects.empty();
    } catch (const UserError& e) {
      throw wrap(Code::CKPT_027, "cannot look at " + where(folder), e);
    }
  }

  void put(const std::string& folder, const std::string& name, std::string_view bytes) override {
    try {
      client_->put(bucket_, key(folder, name), bytes);
    } catch (const UserError& e) {
      throw wrap(Code::CKPT_020, "cannot write the checkpoint file " + where(folder) + "/" + name, e);
    }
  }

  std::optional<std::string> read(const std::string& folder, const std::string& name) const override {
    try {
      return client_->get(bucket_, key(folder, name));
    } catch (const UserError& e) {
      throw wrap(Code::CKPT_023, "cannot read the checkpoint file " + where(folder) + "/" + name, e);
    }
  }

  // Copy, COMPLETE last, then delete the source, COMPLETE first.
  void rename(const std::string& from, const std::string& to) override {
    try {
      auto objects = ordered(from, false);
      std::string src = key(from, {}), dst = key(to, {});
      for (const auto& o : objects) client_->copy(bucket_, o, dst + o.substr(src.size()));
      for (const auto& o : ordered(from, true)) client_->remove(bucket_, o);
    } catch (const UserError& e) {
      throw wrap(Code::CKPT_020, fmt::format("cannot rename {} to {}", where(from), where(to)), e);
    }
  }

  void remove(const std::string& folder) override {
    try {
      for (const auto& o : ordered(folder, true)) client_->remove(bucket_, o);
    } catch (const UserError& e) {
      throw wrap(Code::CKPT_020, "cannot delete " + where(folder), e);
    }
  }

 private:
  // "<root>/<folder>/<name>"; a folder's key ends in '/'.
  std::string key(const std::string& folder, const std::string& name) const {
    std::string k = root_.empty() ? "" : root_ + "/";
    if (!folder.empty()) k += folder + "/";
    return k + name;
  }

  // The keys under `folder`, COMPLETE first or last.
  std::vector<std::string> ordered(const std::string& folder, bool complete_first) const {
    std::string base = key(folder, {});
    std::vector<std::string> keys, complete;
    for (const auto& o : client_->list(bucket_, base).objects)
      (o.key == base + kCompleteName ? complete : keys).push_back(o.key);
    if (complete_first)
      keys.insert(keys.begin(), complete.begin(), complete.end());
    else
      keys.insert(keys.end(), complete.begin(), complete.end());
    return keys;
  }

  static constexpr const char* kCompleteName = "COMPLETE";
  std::shared_ptr<s3::Client> client_;
  std::string bucket_, root_;
};

}  // namespace

std::unique_ptr<CheckpointStore> s3_store(std::shared_ptr<s3::Client> client, const std::string& bucket,
                                          const std::string& root) {
  return std::make_unique<S3Store>(std::move(client), bucket, root);
}

std::unique_ptr<CheckpointStore> s3_store(const Location& location, const std::string& slug) {
  auto client = s3::client_for(S3Role::checkpoint, "the checkpoint location " + location.text);
  std::string root = location.prefix.empty() ? slug : location.prefix + "/" + slug;
  return s3_store(std::move(client), location.bucket, root);
}

}  // namespace sx::ckpt
