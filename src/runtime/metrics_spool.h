#pragma once
// The syvain target's spool (metrics-service.md, "The client"): one file per
// (folder, slug, segment) under $XDG_STATE_HOME/sexpgpu/spool (default
// ~/.local/state/sexpgpu/spool), one record a line, each written whole with
// one write(2) before the record is queued, and the file rewritten without
// the records the service acknowledged. A live run holds its files with
// flock, so another run of the same slug leaves them alone; a kill -9 lets go.
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace sx::report {

// A record as the service gets it: its seq and its NDJSON line (ending in '\n').
struct SpooledRecord {
  int64_t seq = 0;
  std::string line;
};

// $XDG_STATE_HOME/sexpgpu/spool, or ~/.local/state/sexpgpu/spool.
std::string spool_root();
// The folder of one (folder, slug)'s files: <root>/<folder>/<slug>, each percent-encoded.
std::string spool_dir(const std::string& root, const std::string& folder, const std::string& slug);

class SpoolFile {
 public:
  explicit SpoolFile(std::string path) : path_(std::move(path)) {}
  ~SpoolFile();
  SpoolFile(const SpoolFile&) = delete;
  SpoolFile& operator=(const SpoolFile&) = delete;

  const std::string& path() const { return path_; }
  // Opens an existing file and locks it; false when it is gone or another run holds it.
  bool take_over();
  // Its whole lines, in order (a line cut by a crash, or not JSON with a seq, is skipped).
  std::vector<SpooledRecord> read() const;
  // Appends one line (created and locked on first use); false (errno set) when it cannot.
  bool append(const std::string& line);
  // The file holds exactly `records` from now on (none: it is removed).
  bool rewrite(const std::deque<SpooledRecord>& records);

 private:
  bool open_locked(int flags);
  std::string path_;
  int fd_ = -1;
};

}  // namespace sx::report
