#pragma once
// Helpers for the data stage's tests: a temporary directory and loaders.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "data/dataset.h"
#include "util/error.h"

namespace sx::data::testing {

class TempDir {
 public:
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "sx-data-XXXXXX").string();
    path_ = ::mkdtemp(t.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string write(const std::string& rel, const std::string& bytes) const {
    auto p = std::filesystem::path(path_) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }

 private:
  std::string path_;
};

inline std::shared_ptr<TokenizerSpec> chars(std::string alphabet, std::optional<std::string> unknown = {}) {
  auto t = std::make_shared<TokenizerSpec>();
  t->kind = "chars", t->alphabet = std::move(alphabet), t->unknown = std::move(unknown);
  return t;
}

inline LoaderDecl loader(std::string source, std::string format, std::shared_ptr<TokenizerSpec> tok,
                         int64_t seq_len = 4, std::optional<int64_t> vocab = {}) {
  LoaderDecl l;
  l.name = "train", l.source = std::move(source), l.format = std::move(format), l.tokenizer = std::move(tok);
  l.seq_len = seq_len, l.vocab = vocab, l.finalized = true;
  return l;
}

// Every token of a dataset, in order.
inline std::vector<int32_t> all_tokens(const Dataset& d) {
  std::vector<int32_t> out(static_cast<size_t>(d.num_tokens()));
  d.read_tokens(0, d.num_tokens(), out.data());
  return out;
}

// The UserError a statement throws (fails the test when it throws none).
template <typename F>
UserError error_of(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e;
  }
  ADD_FAILURE() << "no UserError thrown";
  return UserError(Code::DATA_001, {}, "<none>");
}

}  // namespace sx::data::testing
