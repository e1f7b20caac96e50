// A run folder on a local file system. Durability is explicit: every file is
// fsynced when put, a folder is fsynced before it is renamed, and the run
// folder after the rename, so what a rename makes visible is on disk.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "checkpoint/regular_file.h"
#include "checkpoint/store.h"
#include "util/fd_io.h"
#include "util/error.h"

namespace sx::ckpt {
namespace {

namespace fs = std::filesystem;

std::string reason(int err) { return std::strerror(err); }

UserError write_failed(const std::string& what, const std::string& path, int err) {
  return UserError(Code::CKPT_020, {}, fmt::format("cannot {} {}: {}", what, path, reason(err)),
                   "check that the checkpoint location is a writable folder "
                   "with free space; "
                   "the previous checkpoints are intact");
}

// 0 or the errno of opening or syncing a directory.
int fsync_dir(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  // Some file systems cannot sync a directory; their renames are durable
  // anyway.
  return err == EINVAL || err == EROFS ? 0 : err;
}

std::string parent_of(const std::string& path) {
  fs::path p = fs::path(path).parent_path();
  return p.empty() ? "." : p.string();
}

class LocalStore final : public CheckpointStore {
 public:
  explicit LocalStore(std::string root) : root_(std::move(root)) {}

  std::string where(const std::string& folder) const override {
    return folder.empty() ? root_ : root_ + "/" + folder;
  }

  std::vector<std::string> list() const override {
    std::vector<std::string> out;
    std::error_code ec;
    fs::directory_iterator it(root_, ec);
    if (ec == std::errc::no_such_file_or_directory) return out;
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      // A symlink is never a checkpoint folder: keeping or deleting through
      // it would reach outside the run folder.
      std::error_code dir_ec;
      if (fs::is_directory(it->symlink_status(dir_ec))) out.push_back(it->path().filename().string());
    }
    if (ec)
      throw UserError(Code::CKPT_027, {},
                      fmt::format("cannot list the checkpoint folder {}: {}", root_, ec.message()),
                      "the checkpoint location must be a readable folder");
    return out;
  }

  bool exists(const std::string& folder, const std::string& name) const override {
    struct stat st {};
    std::string path = name.empty() ? where(folder) : where(folder) + "/" + name;
    if (::lstat(path.c_str(), &st) != 0) return false;
    return name.empty() ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
  }

  void put(const std::string& folder, const std::string& name, std::string_view bytes) override {
    make_root();
    std::string dir = where(folder);
    if (::mkdir(dir.c_str(), 0755) != 0 && !(errno == EEXIST && exists(folder, {})))
      throw write_failed("create the checkpoint folder", dir, errno);
    std::string path = dir + "/" + name;
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw write_failed("create the checkpoint file", path, errno);
    int err = 0;
    if (!write_all(fd, bytes) || ::fsync(fd) != 0) err = errno;
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) throw write_failed("write the checkpoint file", path, err);
  }

  std::optional<std::string> read(const std::string& folder, const std::string& name) const override {
    std::string path = where(folder) + "/" + name;
    FileRead r = read_regular_file(path);
    if (r.bytes) return std::move(r.bytes);
    if (r.error == ENOENT || r.error == ENOTDIR) return std::nullopt;
    throw UserError(Code::CKPT_023, {}, fmt::format("cannot read the checkpoint file {}: {}", path, reason(r.error)));
  }

  std::optional<std::string> local_path() const override { return root_; }

  void rename(const std::string& from, const std::string& to) override {
    std::string src = where(from), dst = where(to);
    if (int err = fsync_dir(src)) throw write_failed("sync the checkpoint folder", src, err);
    if (::rename(src.c_str(), dst.c_str()) != 0)
      throw write_failed(fmt::format("rename {} to", src), dst, errno);
    if (int err = fsync_dir(root_)) throw write_failed("sync the checkpoint folder", root_, err);
  }

  void remove(const std::string& folder) override {
    std::string dir = where(folder);
    struct stat st {};
    if (::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      // Only the link goes; what it points at is outside the run folder.
      if (::unlink(dir.c_str()) != 0 && errno != ENOENT) throw write_failed("delete", dir, errno);
      return;
    }
    if (!exists(folder, {})) return;
    std::string complete = dir + "/COMPLETE";
    if (::unlink(complete.c_str()) != 0 && errno != ENOENT) throw write_failed("delete", complete, errno);
    if (int err = fsync_dir(dir)) throw write_failed("sync the checkpoint folder", dir, err);
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (ec) throw write_failed("delete the checkpoint folder", dir, ec.value());
  }

 private:
  // Creates the run folder (and the location) on the first put; the parent of a
  // new folder is synced so the folder survives a crash.
  void make_root() {
    if (root_ok_) return;
    std::error_code ec;
    bool created = fs::create_directories(root_, ec);
    if (ec) throw write_failed("create the checkpoint folder", root_, ec.value());
    if (!fs::is_directory(root_, ec)) throw write_failed("create the checkpoint folder", root_, ENOTDIR);
    if (created) {
      if (int err = fsync_dir(parent_of(root_))) throw write_failed("sync the folder", parent_of(root_), err);
    }
    root_ok_ = true;
  }

  std::string root_;
  bool root_ok_ = false;
};

}  // namespace

std::unique_ptr<CheckpointStore> local_store(const std::string& root) {
  return std::make_unique<LocalStore>(root);
}

std::unique_ptr<CheckpointStore> open_store(const Location& location, const std::string& slug) {
  if (location.s3) return s3_store(location, slug);
  std::string base = location.text.empty() ? "." : location.text;
  return local_store(base.ends_with('/') ? base + slug : base + "/" + slug);
}

}  // namespace sx::ckpt
