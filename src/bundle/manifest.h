#pragma once
// A bundle's manifest (manifest.json, the archive's first member): what the
// archive holds, each file's size and SHA-256, the selection and the slug.
//
// Paths are relative to the experiment's folder and may start with `../`;
// extracted, the experiment sits at `<root>/<folder>/<experiment>`, where
// `folder` is as many of the original folder's last names as the deepest `../`
// needs, so every path resolves inside `<root>` as it did on the machine that
// made the bundle.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lang/selection.h"

namespace sx::bundle {

inline constexpr int kFormatVersion = 1;
inline constexpr const char* kFormatName = "sexpgpu-bundle";
inline constexpr const char* kManifestMember = "manifest.json";
inline constexpr uint64_t kMaxManifestBytes = 16u << 20;
inline constexpr size_t kMaxFiles = 100'000;

struct File {
  std::string path;    // relative to the experiment's folder
  std::string member;  // its name in the archive
  std::string kind;    // experiment, source, tokenizer, data
  uint64_t bytes = 0;
  std::string sha256;
};

// A local data file left out by --no-data.
struct Reference {
  std::string path;  // relative to the experiment's folder (and, when run, to the bundle's)
  uint64_t bytes = 0;
  std::string sha256;
};

struct S3Object {
  std::string uri;
  uint64_t bytes = 0;
  std::string etag;
};

struct Manifest {
  int version = kFormatVersion;
  std::string made_by;     // the sexpgpu version
  std::string experiment;  // the file's name
  std::string folder;      // "" or "a/b": where the experiment sits under the root
  std::string slug;
  Selection selection;  // variant, sets, steps, eval_every, diagnostics, slug_base
  std::vector<File> files;
  std::vector<Reference> references;
  std::vector<S3Object> s3;
};

std::string to_json(const Manifest& m);
// Throws E-CLI-042 (not a manifest), E-CLI-043 (another version), E-CLI-045
// (an unsafe path, a duplicate, too many files). `bundle` names the archive.
Manifest parse_manifest(std::string_view text, const std::string& bundle);

// The member name a path is stored under: `files/<path>`, each leading `..`
// written `_up`, so no member name leaves the archive's root.
std::string member_name(const std::string& path);

// True for a relative path of plain names ("a/b.txt"); with `ups`, it may start
// with up to that many `..` names. No empty, `.` or `..` name elsewhere.
bool safe_relative(std::string_view path, size_t ups = 0);
// How many `..` names `path` starts with.
size_t leading_ups(std::string_view path);

}  // namespace sx::bundle
