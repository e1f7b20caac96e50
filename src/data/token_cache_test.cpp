// The token cache: a second load reads the entry instead of tokenizing; an
// edited source or another tokenizer misses; a damaged entry is rebuilt, never
// read; a folder that cannot be written is a warning.
#include "data/token_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "data/dataset.h"
#include "data/test_util.h"

namespace sx::data {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string fixture_path(const std::string& name) {
  const char* root = std::getenv("SEXPGPU_SOURCE_DIR");
  return std::string(root ? root : SEXPGPU_SOURCE_DIR_DEFAULT) + "/tests/fixtures/bpe/" + name;
}

std::shared_ptr<TokenizerSpec> bpe(const std::string& name = "gpt2") {
  auto t = std::make_shared<TokenizerSpec>();
  t->kind = "bpe", t->path = fixture_path(name + ".tokenizer.json");
  return t;
}

// XDG_CACHE_HOME pointed at a fresh folder for one test, restored after.
class CacheHome {
 public:
  explicit CacheHome(const std::string& path) {
    if (const char* old = std::getenv("XDG_CACHE_HOME")) old_ = old;
    setenv("XDG_CACHE_HOME", path.c_str(), 1);
  }
  ~CacheHome() { old_ ? setenv("XDG_CACHE_HOME", old_->c_str(), 1) : unsetenv("XDG_CACHE_HOME"); }

 private:
  std::optional<std::string> old_;
};

struct Counts {
  int64_t hits, misses, rebuilt, stored;
  static Counts now() {
    auto& s = token_cache_stats();
    return {s.hits.load(), s.misses.load(), s.rebuilt.load(), s.stored.load()};
  }
  Counts since(const Counts& before) const {
    return {hits - before.hits, misses - before.misses, rebuilt - before.rebuilt, stored - before.stored};
  }
};

std::vector<int32_t> ids_of(const std::shared_ptr<const Dataset>& d) { return testing::all_tokens(*d); }

std::vector<int32_t> direct(const std::string& text) {
  std::vector<int32_t> out;
  BpeTokenizer::parse(
      [] {
        std::ifstream f(fixture_path("gpt2.tokenizer.json"));
        return std::string(std::istreambuf_iterator<char>(f), {});
      }(),
      "gpt2")
      ->encode(text, out);
  return out;
}

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  if (fs::exists(dir))
    for (auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

const std::string kText = "Hello, World! The cache keeps these ids <|endoftext|> and reads them back.\n";

TEST(TokenCache, ColdThenWarmReadsTheEntryInsteadOfTokenizing) {
  TempDir d;
  CacheHome home(d.path() + "/cache");
  d.write("a.txt", kText);
  auto l = testing::loader("a.txt", "text", bpe());
  auto before = Counts::now();
  auto cold = Dataset::load(l, d.path());
  auto c = Counts::now().since(before);
  EXPECT_EQ(c.misses, 1);
  EXPECT_EQ(c.stored, 1);
  EXPECT_EQ(c.hits, 0);
  auto files = entries(token_cache_dir());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].parent_path(), fs::path(d.path()) / "cache" / "sexpgpu" / "tokens");
  EXPECT_EQ(files[0].extension(), ".tok");
  auto mtime = fs::last_write_time(files[0]);

  before = Counts::now();
  auto warm = Dataset::load(l, d.path());
  c = Counts::now().since(before);
  EXPECT_EQ(c.hits, 1);
  EXPECT_EQ(c.misses + c.rebuilt + c.stored, 0);
  EXPECT_EQ(ids_of(warm), ids_of(cold));
  EXPECT_EQ(ids_of(warm), direct(kText));
  EXPECT_EQ(fs::last_write_time(files[0]), mtime);  // read, not rewritten
}

TEST(TokenCache, AnEditedSourceOrAnotherTokenizerMisses) {
  TempDir d;
  CacheHome home(d.path() + "/cache");
  d.write("a.txt", kText);
  Dataset::load(testing::loader("a.txt", "text", bpe()), d.path());
  d.write("a.txt", kText + "one more line\n");
  auto before = Counts::now();
  auto edited = Dataset::load(testing::loader("a.txt", "text", bpe()), d.path());
  EXPECT_EQ(Counts::now().since(before).misses, 1);
  EXPECT_EQ(ids_of(edited), direct(kText + "one more line\n"));
  before = Counts::now();
  Dataset::load(testing::loader("a.txt", "text", bpe("gpt2-nfkc")), d.path());
  EXPECT_EQ(Counts::now().since(before).misses, 1);
  EXPECT_EQ(entries(token_cache_dir()).size(), 3u);
  // jsonl: the field is part of the key.
  d.write("a.jsonl", "{\"text\": \"Hello there, a text field\", \"body\": \"World, and another field\"}\n");
  auto jsonl = testing::loader("a.jsonl", "jsonl", bpe());
  Dataset::load(jsonl, d.path());
  jsonl.field = "body";
  before = Counts::now();
  auto body = Dataset::load(jsonl, d.path());
  EXPECT_EQ(Counts::now().since(before).misses, 1);
  EXPECT_EQ(ids_of(body), direct("World, and another field"));
}

void rewrite(const fs::path& p, const std::function<void(std::string&)>& edit) {
  std::ifstream in(p, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  in.close();
  edit(bytes);
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(TokenCache, ATruncatedOrDamagedEntryIsRebuiltNeverRead) {
  TempDir d;
  CacheHome home(d.path() + "/cache");
  std::string text = kText + kText + "more text for a longer entry\n";
  d.write("a.txt", text);
  auto l = testing::loader("a.txt", "text", bpe(), 4);
  Dataset::load(l, d.path());
  fs::path entry = entries(token_cache_dir()).at(0);
  auto whole = fs::file_size(entry);
  const std::vector<std::function<void(std::string&)>> damages = {
      [](std::string& b) { b.resize(b.size() - 4); },      // one id short
      [](std::string& b) { b.resize(b.size() / 2 + 1); },  // cut mid-id
      [](std::string& b) { b[b.size() - 3] ^= 0x01; },     // a flipped bit in an id
      [](std::string& b) { b[0] = 'X'; },                  // not an entry
      [](std::string& b) { b.resize(10); },                // cut in the header
      [](std::string& b) { b.clear(); },                   // empty
  };
  for (size_t i = 0; i < damages.size(); ++i) {
    rewrite(entry, damages[i]);
    auto before = Counts::now();
    auto ds = Dataset::load(l, d.path());
    auto c = Counts::now().since(before);
    EXPECT_EQ(c.rebuilt, 1) << "damage " << i;
    EXPECT_EQ(c.hits, 0) << "damage " << i;
    EXPECT_EQ(ids_of(ds), direct(text)) << "damage " << i;
    EXPECT_EQ(fs::file_size(entry), whole) << "damage " << i;  // rewritten whole
  }
  auto before = Counts::now();
  Dataset::load(l, d.path());
  EXPECT_EQ(Counts::now().since(before).hits, 1);
}

TEST(TokenCache, AnUnwritableFolderIsAWarningAndTheRunGoesOn) {
  TempDir d;
  d.write("not-a-folder", "a file where the cache folder's parent would be");
  CacheHome home(d.path() + "/not-a-folder");
  d.write("a.txt", kText);
  ::testing::internal::CaptureStderr();
  auto ds = Dataset::load(testing::loader("a.txt", "text", bpe()), d.path());
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(ids_of(ds), direct(kText));
  EXPECT_NE(err.find("warning: cannot write the token cache " + d.path() + "/not-a-folder/sexpgpu/tokens"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("tokenized again at every run"), std::string::npos) << err;
}

TEST(TokenCache, CharsAndBytesAreNotCached) {
  TempDir d;
  CacheHome home(d.path() + "/cache");
  d.write("a.txt", "abcabc");
  auto before = Counts::now();
  Dataset::load(testing::loader("a.txt", "text", testing::chars("abc")), d.path());
  auto c = Counts::now().since(before);
  EXPECT_EQ(c.misses + c.hits + c.stored, 0);
  EXPECT_TRUE(entries(token_cache_dir()).empty());
}

TEST(TokenCache, DefaultFolderFollowsXdgThenHome) {
  TempDir d;
  {
    CacheHome home("/somewhere/cache");
    EXPECT_EQ(token_cache_dir(), fs::path("/somewhere/cache/sexpgpu/tokens"));
  }
  CacheHome relative("relative/cache");  // not absolute: ignored, as the XDG spec says
  std::string old_home = std::getenv("HOME") ? std::getenv("HOME") : "";
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(token_cache_dir(), fs::path("/home/someone/.cache/sexpgpu/tokens"));
  setenv("HOME", old_home.c_str(), 1);
}

}  // namespace
}  // namespace sx::data
