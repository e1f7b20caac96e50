#pragma once
// `sexpgpu bundle`: an experiment, what it requires and its data in one tar +
// zstd archive (manifest.json first, then the files in name order, every
// member with mtime 0, uid/gid 0 and mode 0644, so the same inputs give the
// same bytes), and the reader that checks one and extracts it into a private
// folder before anything of it runs.
#include <memory>
#include <string>
#include <vector>

#include "bundle/manifest.h"
#include "lang/interp.h"

namespace sx::bundle {

// What goes in: the manifest, and where on disk each of its files is read from.
struct Packing {
  Manifest manifest;
  std::vector<std::string> disk_paths;  // parallel to manifest.files
};

// The experiment `file` as evaluated by `in` under `sel` (loaders finalized):
// the file, every file it required, each bpe tokenizer's file, each loader's
// local data (shards and manifests) or, with `no_data`, references to it; s3://
// data by URI, size and ETag (a HEAD with the data role's client). E-CLI-041
// for a file named by an absolute path or not a regular file, E-CLI-040 for one
// that cannot be read.
Packing collect(const std::string& file, Interp& in, const Selection& sel, bool no_data);

// Each s3:// object of the manifest still has its size and ETag (a HEAD with
// the data role's client); E-CLI-047 naming the first that does not.
void check_s3_objects(const Manifest& m, const std::string& bundle);

// Writes the archive to `out` (a temporary file renamed over it). E-CLI-040.
void write_bundle(const std::string& out, const Packing& p);

// A bundle checked and extracted: every member against the manifest (its name,
// type, size and SHA-256), the --no-data references against the files beside
// the bundle (linked in when equal). The folder is removed when this is destroyed.
class Extracted {
 public:
  ~Extracted();
  const Manifest& manifest() const { return manifest_; }
  const std::string& root() const { return root_; }
  std::string experiment_path() const;  // what to compile

 private:
  friend std::unique_ptr<Extracted> extract(const std::string&, const std::string&);
  Manifest manifest_;
  std::string root_;
};

// Checks and extracts `bundle` into a new private folder (mode 0700) under
// `parent` (the temporary directory: $TMPDIR or /tmp). E-CLI-042 .. E-CLI-046;
// on any error nothing is left behind.
std::unique_ptr<Extracted> extract(const std::string& bundle, const std::string& parent);

}  // namespace sx::bundle
