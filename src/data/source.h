#pragma once
// Sources: a loader's :source resolved into its shards — a path, a glob
// (matches in name order), a .manifest or a .manifest.json.
#include <string>
#include <vector>

#include "data/shard_reader.h"

namespace sx::data {

// `base_dir` is the experiment file's directory ("" for the cwd). Throws
// E-DATA-001 (a glob matching nothing, a missing manifest), E-DATA-002 (a
// manifest without shards), E-DATA-004 (a bad manifest), E-DATA-001 for an s3:// prefix or glob matching nothing; an s3:// source is listed
// with the data role's client (s3::client_for, E-ENV-002 without credentials).
// Shard files themselves are not opened here.
std::vector<ShardRef> resolve_source(const std::string& source, const std::string& base_dir);

// `rel` joined to `dir` unless it is absolute; normalised ("a/./b" is "a/b").
std::string join_path(const std::string& dir, const std::string& rel);

}  // namespace sx::data
