// tokens-u16/u32 shards read in place: raw (nanoGPT) and llm.c files, the
// same windows as in memory, a 4 GB sparse file opened without reading it,
// a file that shrinks under the run, and llm.c headers that do not fit.
#include "data/token_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "data/dataset.h"
#include "data/test_util.h"
#include "util/memory.h"
#include "util/sha256.h"

namespace sx::data {
namespace {

using testing::error_of;
using testing::TempDir;

std::string ids_le(const std::vector<int32_t>& ids, int width) {
  std::string b;
  for (int32_t id : ids)
    for (int k = 0; k < width; ++k) b += static_cast<char>((uint32_t(id) >> (8 * k)) & 0xFF);
  return b;
}

std::string llmc_header(uint32_t magic, uint32_t version, uint32_t count) {
  std::string h(kLlmcHeaderBytes, '\0');
  for (uint32_t i = 0, v[3] = {magic, version, count}; i < 3; ++i)
    for (int k = 0; k < 4; ++k) h[4 * i + k] = static_cast<char>((v[i] >> (8 * k)) & 0xFF);
  return h;
}

std::vector<int32_t> some_ids(int n, int vocab) {
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back((i * 7919 + 13) % vocab);
  return ids;
}

// Every window of `a` equals the same window of `b`.
void expect_same_windows(const Dataset& a, const Dataset& b) {
  ASSERT_EQ(a.num_windows(), b.num_windows());
  ASSERT_GT(a.num_windows(), 0);
  size_t L = static_cast<size_t>(a.seq_len());
  std::vector<int32_t> ta(L), ga(L), tb(L), gb(L);
  for (int64_t k = 0; k < a.num_windows(); ++k) {
    a.window(k, ta.data(), ga.data());
    b.window(k, tb.data(), gb.data());
    ASSERT_EQ(ta, tb) << "window " << k;
    ASSERT_EQ(ga, gb) << "window " << k;
  }
}

std::shared_ptr<const Dataset> load(const TempDir& d, const std::string& source, const std::string& format,
                                    int64_t vocab, int64_t seq_len = 5) {
  return Dataset::load(testing::loader(source, format, nullptr, seq_len, vocab), d.path());
}

TEST(TokenFile, RawAndLlmcFilesGiveTheWindowsOfTheSameIdsInMemory) {
  TempDir d;
  auto ids = some_ids(1003, 50257);
  auto memory = Dataset::from_tokens("train", ids, 5, 50257);
  d.write("raw.u16", ids_le(ids, 2));
  d.write("raw.u32", ids_le(ids, 4));
  d.write("llmc-gpt2.bin", llmc_header(kLlmcMagic, 1, 1003) + ids_le(ids, 2));
  d.write("llmc-llama3.bin", llmc_header(kLlmcMagic, 2, 1003) + ids_le(ids, 4));
  for (auto [file, format] : {std::pair{"raw.u16", "tokens-u16"},
                              {"raw.u32", "tokens-u32"},
                              {"llmc-gpt2.bin", "tokens-u16"},
                              {"llmc-llama3.bin", "tokens-u32"}}) {
    SCOPED_TRACE(file);
    auto ds = load(d, file, format, 50257);
    EXPECT_EQ(ds->num_tokens(), 1003);
    EXPECT_EQ(testing::all_tokens(*ds), ids);
    expect_same_windows(*ds, *memory);
  }
  // Windows across shards, one in memory (a manifest's sha256 reads it whole) and one read in place.
  d.write("half-a.u16", ids_le({ids.begin(), ids.begin() + 501}, 2));
  d.write("half-b.u16", ids_le({ids.begin() + 501, ids.end()}, 2));
  std::string a = ids_le({ids.begin(), ids.begin() + 501}, 2);
  d.write("two.manifest.json",
          R"({"shards": [{"uri": "half-a.u16", "sha256": ")" + sha256_hex(a) + R"("}, {"uri": "half-b.u16"}]})");
  auto two = load(d, "two.manifest.json", "tokens-u16", 50257);
  EXPECT_EQ(two->shards().size(), 2u);
  expect_same_windows(*two, *memory);
}

TEST(TokenFile, LlmcHeadersThatDoNotFitAreCodedErrorsNamingTheFile) {
  TempDir d;
  auto ids = some_ids(100, 50257);
  auto check = [&](const std::string& name, const std::string& bytes, const std::string& format, Code code,
                   const std::string& says) {
    SCOPED_TRACE(name);
    d.write(name, bytes);
    auto e = error_of([&] { load(d, name, format, 50257); });
    EXPECT_EQ(e.code(), code);
    EXPECT_NE(std::string(e.what()).find(d.path() + "/" + name), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  };
  check("magic.bin", llmc_header(20240521, 1, 100) + ids_le(ids, 2), "tokens-u16", Code::DATA_060,
        "magic is 20240521, not 20240520");
  check("v2-as-u16.bin", llmc_header(kLlmcMagic, 2, 100) + ids_le(ids, 4), "tokens-u16", Code::DATA_061,
        "version 2, but :format tokens-u16 reads version 1");
  check("v7.bin", llmc_header(kLlmcMagic, 7, 100) + ids_le(ids, 2), "tokens-u16", Code::DATA_061, "version 7");
  check("short.bin", llmc_header(kLlmcMagic, 1, 101) + ids_le(ids, 2), "tokens-u16", Code::DATA_062,
        "says 101 tokens, but the file holds 200 bytes of ids (100 tokens)");
  check("long.bin", llmc_header(kLlmcMagic, 2, 10) + ids_le(ids, 4), "tokens-u32", Code::DATA_062, "says 10 tokens");
  // An id past the vocabulary is named by its byte in the file, header included.
  auto bad = ids;
  bad[3] = 60000;
  check("bad-id.bin", llmc_header(kLlmcMagic, 1, 100) + ids_le(bad, 2), "tokens-u16", Code::DATA_008,
        "at byte 1030: token id 60000");
}

TEST(TokenFile, ASparse4GBFileOpensWithoutBeingRead) {
  TempDir d;
  std::string path = d.path() + "/big.u16";
  constexpr uint64_t kSize = 4ull << 30;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(kSize)), 0);
  std::string tail = ids_le({1, 2, 3, 4}, 2);  // the last four ids
  ASSERT_EQ(::pwrite(fd, tail.data(), tail.size(), static_cast<off_t>(kSize - tail.size())), 8);
  ::close(fd);
  set_memory_budget_gib(1);  // read into memory it would be 8 GiB of int32: refused (E-DATA-031)
  rusage before{}, after{};
  ::getrusage(RUSAGE_SELF, &before);
  auto ds = load(d, "big.u16", "tokens-u16", 50257, 1024);
  set_memory_budget_gib(0);
  EXPECT_EQ(ds->num_tokens(), int64_t{1} << 31);
  std::vector<int32_t> tok(1024), tgt(1024);
  ds->window(ds->num_windows() / 2, tok.data(), tgt.data());
  EXPECT_EQ(tok, std::vector<int32_t>(1024, 0));
  std::vector<int32_t> last(4);
  ds->read_tokens(ds->num_tokens() - 4, 4, last.data());
  EXPECT_EQ(last, (std::vector<int32_t>{1, 2, 3, 4}));
  ::getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 256 << 10) << "KiB: the file was read into memory";
}

TEST(TokenFile, AFileThatShrinksUnderTheRunIsACodedErrorNotASigbus) {
  TempDir d;
  auto ids = some_ids(1000, 50257);
  std::string path = d.write("shrinks.u32", ids_le(ids, 4));
  auto ds = load(d, "shrinks.u32", "tokens-u32", 50257);
  std::filesystem::resize_file(path, 400);  // 100 ids left
  std::vector<int32_t> tok(5), tgt(5);
  ds->window(3, tok.data(), tgt.data());  // still there
  EXPECT_EQ(tok, std::vector<int32_t>(ids.begin() + 15, ids.begin() + 20));
  auto e = error_of([&] { ds->window(150, tok.data(), tgt.data()); });
  EXPECT_EQ(e.code(), Code::DATA_063);
  EXPECT_NE(std::string(e.what()).find(
                path + " is now 400 bytes, but it held 4000 bytes when the run opened it (a record needs byte 3000)"),
            std::string::npos)
      << e.what();
}

TEST(TokenFile, ALargeFilesIdsAreCheckedAsTheyAreRead) {
  TempDir d;
  std::string path = d.path() + "/large.u16";
  constexpr uint64_t kSize = TokenFile::kCheckedAtOpen + 4096;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(kSize)), 0);
  std::string bad = ids_le({65000}, 2);
  ASSERT_EQ(::pwrite(fd, bad.data(), 2, 800000), 2);  // token 400000: window 99999's last target
  ::close(fd);
  auto ds = load(d, "large.u16", "tokens-u16", 50257, 4);  // opens: not every id is read
  std::vector<int32_t> tok(4), tgt(4);
  ds->window(0, tok.data(), tgt.data());
  auto e = error_of([&] { ds->window(99999, tok.data(), tgt.data()); });
  EXPECT_EQ(e.code(), Code::DATA_008);
  EXPECT_NE(std::string(e.what()).find("at byte 800000: token id 65000"), std::string::npos) << e.what();
  // A small file's bad id is found at open, before the first step.
  d.write("small.u16", ids_le({1, 2, 3, 4, 5, 65000}, 2));
  EXPECT_EQ(error_of([&] { load(d, "small.u16", "tokens-u16", 50257, 4); }).code(), Code::DATA_008);
}

}  // namespace
}  // namespace sx::data
