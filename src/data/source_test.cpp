#include "data/source.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/dataset.h"
#include "data/test_util.h"
#include "util/memory.h"
#include "util/sha256.h"

namespace sx::data {
namespace {

using testing::all_tokens;
using testing::error_of;
using testing::TempDir;

std::shared_ptr<const Dataset> load_text(const TempDir& d, const std::string& source, int64_t seq_len = 2) {
  return Dataset::load(testing::loader(source, "text", testing::chars("abcdefgh\n"), seq_len), d.path());
}

std::string message(const UserError& e) { return e.what(); }

TEST(Source, PathIsRelativeToTheExperimentDirectory) {
  TempDir d;
  d.write("data/train.txt", "abcabc");
  auto ds = load_text(d, "data/train.txt");
  EXPECT_EQ(ds->num_tokens(), 6);
  ASSERT_EQ(ds->shards().size(), 1u);
  EXPECT_EQ(ds->shards()[0].name, d.path() + "/data/train.txt");
}

TEST(Source, MissingFileNamesIt) {
  TempDir d;
  auto e = error_of([&] { load_text(d, "data/nope.txt"); });
  EXPECT_EQ(e.code(), Code::DATA_001);
  EXPECT_NE(message(e).find("data/nope.txt not found"), std::string::npos) << message(e);
  ASSERT_FALSE(e.diagnostics()[0].notes.empty());
  EXPECT_EQ(e.diagnostics()[0].notes.back(), "in: loader `train`");
}

TEST(Source, DirectoryCannotBeRead) {
  TempDir d;
  d.write("data/x/a", "a");
  EXPECT_EQ(error_of([&] { load_text(d, "data/x"); }).code(), Code::DATA_013);
}

// Opening a FIFO used to wait for a writer forever; a device never ends.
TEST(Source, FifoIsRefusedWithoutBlocking) {
  TempDir d;
  std::string fifo = d.path() + "/stream.txt";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto e = error_of([&] { load_text(d, "stream.txt"); });
  EXPECT_EQ(e.code(), Code::DATA_030);
  EXPECT_NE(message(e).find(fifo + " is a FIFO, not a regular file"), std::string::npos) << message(e);
}

TEST(Source, DevZeroBehindALinkIsRefused) {
  TempDir d;
  std::string link = d.path() + "/zeros.txt";
  ASSERT_EQ(::symlink("/dev/zero", link.c_str()), 0);
  auto e = error_of([&] { load_text(d, "zeros.txt"); });
  EXPECT_EQ(e.code(), Code::DATA_030);
  EXPECT_NE(message(e).find(link + " is a character device"), std::string::npos) << message(e);
}

TEST(Source, StopFlagCutsReadingShort) {
  TempDir d;
  d.write("data/train.txt", "abcabc");
  std::atomic<bool> stop{true};
  auto e = error_of(
      [&] { Dataset::load(testing::loader("data/train.txt", "text", testing::chars("abc"), 2), d.path(), &stop); });
  EXPECT_EQ(e.code(), Code::DATA_013);
  EXPECT_NE(message(e).find("cancelled by a stopping signal"), std::string::npos) << message(e);
}

TEST(Source, DataLargerThanTheMemoryBudgetIsRefusedBeforeReading) {
  TempDir d;
  d.write("data/a.txt", std::string(600, 'a'));
  d.write("data/b.txt", std::string(600, 'b'));
  set_memory_budget_gib(1000.0 / (1 << 30));  // 1,000 bytes
  auto e = error_of([&] { load_text(d, "data/*.txt"); });
  set_memory_budget_gib(0);
  EXPECT_EQ(e.code(), Code::DATA_031);
  EXPECT_NE(message(e).find("holds 1.2 KiB of data up to " + d.path() + "/data/b.txt"), std::string::npos)
      << message(e);
}

TEST(Source, GlobMatchesInNameOrder) {
  TempDir d;
  d.write("data/shard-10.txt", "c");
  d.write("data/shard-02.txt", "b");
  d.write("data/shard-01.txt", "a");
  d.write("data/other.txt", "h");
  auto shards = resolve_source("data/shard-*.txt", d.path());
  ASSERT_EQ(shards.size(), 3u);
  EXPECT_EQ(shards[0].display, d.path() + "/data/shard-01.txt");
  EXPECT_EQ(shards[2].display, d.path() + "/data/shard-10.txt");
  // Concatenated with no separator.
  auto ds = load_text(d, "data/shard-*.txt");
  EXPECT_EQ(all_tokens(*ds), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(ds->shards()[1].first_token, 1);
  auto e = error_of([&] { resolve_source("data/none-*.txt", d.path()); });
  EXPECT_EQ(e.code(), Code::DATA_001);
  EXPECT_NE(message(e).find("none-*.txt"), std::string::npos);
}

TEST(Source, LineManifestWithCommentsAndRelativeEntries) {
  TempDir d;
  d.write("m/a.txt", "ab");
  d.write("other/b.txt", "cd");
  std::string abs = d.write("c.txt", "ef");
  d.write("m/list.manifest", "# shards\n\n  a.txt  \n../other/b.txt\r\n" + abs + "\n");
  auto ds = load_text(d, "m/list.manifest");
  EXPECT_EQ(all_tokens(*ds), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(ds->shards()[1].name, d.path() + "/other/b.txt");
  d.write("m/empty.manifest", "# nothing\n");
  EXPECT_EQ(error_of([&] { load_text(d, "m/empty.manifest"); }).code(), Code::DATA_002);
  d.write("m/missing.manifest", "a.txt\nz.txt\n");
  auto e = error_of([&] { load_text(d, "m/missing.manifest"); });
  EXPECT_EQ(e.code(), Code::DATA_001);
  EXPECT_NE(message(e).find("m/z.txt"), std::string::npos);
}

TEST(Source, JsonManifestChecksSizeAndSha) {
  TempDir d;
  d.write("s/0.txt", "abc");
  d.write("s/1.txt", "defg");
  std::string h0 = sha256_hex("abc"), h1 = sha256_hex("defg");
  d.write("s/ok.manifest.json", R"({"shards":[{"uri":"0.txt","bytes":3,"sha256":")" + h0 + R"("},{"uri":"1.txt"}]})");
  EXPECT_EQ(load_text(d, "s/ok.manifest.json")->num_tokens(), 7);

  d.write("s/size.manifest.json", R"({"shards":[{"uri":"0.txt","bytes":3},{"uri":"1.txt","bytes":5}]})");
  auto e = error_of([&] { load_text(d, "s/size.manifest.json"); });
  EXPECT_EQ(e.code(), Code::DATA_003);
  EXPECT_NE(message(e).find("s/1.txt has 4 bytes, its manifest says 5"), std::string::npos) << message(e);

  d.write("s/sha.manifest.json", R"({"shards":[{"uri":"1.txt","sha256":")" + h0 + R"("}]})");
  e = error_of([&] { load_text(d, "s/sha.manifest.json"); });
  EXPECT_EQ(e.code(), Code::DATA_003);
  EXPECT_NE(message(e).find("s/1.txt has SHA-256 " + h1), std::string::npos) << message(e);
}

TEST(Source, BadJsonManifests) {
  TempDir d;
  for (std::string bad : {"{", "[]", R"({"shards":{}})", R"({"shards":[{"bytes":1}]})", R"({"shards":[{"uri":""}]})",
                          R"({"shards":[{"uri":"a","bytes":-1}]})", R"({"shards":[{"uri":"a","sha256":"xyz"}]})"}) {
    d.write("bad.manifest.json", bad);
    auto e = error_of([&] { resolve_source("bad.manifest.json", d.path()); });
    EXPECT_EQ(e.code(), Code::DATA_004) << bad;
    EXPECT_NE(message(e).find("bad.manifest.json"), std::string::npos);
  }
  d.write("none.manifest.json", R"({"shards":[]})");
  EXPECT_EQ(error_of([&] { resolve_source("none.manifest.json", d.path()); }).code(), Code::DATA_002);
}

TEST(Source, S3ObjectsAndManifestEntries) {  // against a server: s3_source_test.cpp
  TempDir d;
  auto one = resolve_source("s3://bucket/train.txt", d.path());
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].uri, "s3://bucket/train.txt");
  d.write("m.manifest", "s3://bucket/a.bin\nlocal.bin\n");
  auto m = resolve_source("m.manifest", d.path());
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].uri, "s3://bucket/a.bin");
  EXPECT_EQ(m[1].uri, d.path() + "/local.bin");
  EXPECT_EQ(join_path("s3://b/dir/", "x/../y.bin"), "s3://b/dir/y.bin");
}

TEST(Source, EmptySourceAndTooFewTokens) {
  TempDir d;
  d.write("empty.txt", "");
  auto e = error_of([&] { load_text(d, "empty.txt"); });
  EXPECT_EQ(e.code(), Code::DATA_002);
  EXPECT_NE(message(e).find("empty.txt"), std::string::npos);
  d.write("short.txt", "abcd");  // seq-len 4: a record needs 5 tokens
  EXPECT_EQ(error_of([&] { load_text(d, "short.txt", 4); }).code(), Code::DATA_012);
}

TEST(Source, TokenFilesLoad) {
  TempDir d;
  d.write("t.bin", std::string("\x01\x00\x02\x00\x03\x00\x04\x00\x05\x00", 10));
  auto ds = Dataset::load(testing::loader("t.bin", "tokens-u16", nullptr, 4, 10), d.path());
  EXPECT_EQ(ds->num_tokens(), 5);
  EXPECT_EQ(ds->vocab(), 10);
  d.write("u.bin", std::string("\x01\x00\x02\x00\x03\x00\x04\x00\x05", 9));  // truncated
  auto e = error_of([&] { Dataset::load(testing::loader("u.bin", "tokens-u16", nullptr, 4, 10), d.path()); });
  EXPECT_EQ(e.code(), Code::DATA_009);
  EXPECT_NE(message(e).find("u.bin has 9 bytes"), std::string::npos);
}

TEST(Source, ExampleDataLoadsWithTheExampleAlphabet) {
  const char* root = std::getenv("SEXPGPU_SOURCE_DIR");
  std::string dir = std::string(root ? root : SEXPGPU_SOURCE_DIR_DEFAULT) + "/examples";
  auto tok = testing::chars("abcdefghijklmnopqrstuvwxyz .,;\n!");
  auto train = Dataset::load(testing::loader("data/train.txt", "text", tok, 16), dir);
  auto valid = Dataset::load(testing::loader("data/valid.txt", "text", tok, 16), dir);
  EXPECT_GT(train->num_tokens(), 150000);
  EXPECT_GT(valid->num_tokens(), 15000);
  EXPECT_EQ(train->vocab(), 32);
}

}  // namespace
}  // namespace sx::data
