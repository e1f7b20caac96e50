#pragma once
// The three globs of an experiment, one function per meaning: they differ in
// whether `*` crosses a `/` and in whether `[...]` is a set.
#include <string_view>

namespace sx {

// A model-path glob (:no-decay): `*` any run of characters, `/` included;
// `?` any one character. Every other character is itself.
bool model_path_glob_match(std::string_view glob, std::string_view path);

// A diagnostics glob (:diagnostics, against a tap's name like "attn/entropy"):
// `*` any run of characters within one `/` segment; `?` one character other
// than `/`. Every other character is itself.
bool diagnostic_glob_match(std::string_view glob, std::string_view name);

// A data source's object-key glob (s3://b/dir/*.bin), matched as glob(3)
// matches the local files of a source: fnmatch(3) with FNM_PATHNAME, so `*`,
// `?` and `[...]` never match a `/`.
bool source_glob_match(std::string_view glob, std::string_view key);

}  // namespace sx
