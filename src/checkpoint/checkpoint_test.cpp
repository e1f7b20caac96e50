// Writing, finding, replacing, keeping and reading checkpoints.
#include "checkpoint/checkpoint.h"

#include <gtest/gtest.h>

#include "checkpoint/checkpoint_test_util.h"
#include "checkpoint/folders.h"

namespace sx::ckpt {
namespace {

using namespace testing;

void expect_same(const st::Tensors& a, const st::Tensors& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) {
    ASSERT_TRUE(b.count(name)) << name;
    EXPECT_EQ(t.shape, b.at(name).shape) << name;
    EXPECT_EQ(t.values, b.at(name).values) << name;
  }
}

TEST(Checkpoint, RoundTrip) {
  TempDir tmp;
  CheckpointData d = sample(10, 0.5f);
  WriteResult w = write_checkpoint(tmp.location(), "my-run", d);
  EXPECT_EQ(w.path, tmp.path() + "/my-run/step-10");
  EXPECT_GT(w.bytes, 0);
  EXPECT_GE(w.seconds, 0);
  EXPECT_EQ(names_in(w.path), (std::vector<std::string>{"COMPLETE", "model.safetensors",
                                                        "optimizer.safetensors", "state.json"}));
  int64_t on_disk = 0;
  for (const auto& name : names_in(w.path))
    on_disk += static_cast<int64_t>(fs::file_size(w.path + "/" + name));
  EXPECT_EQ(w.bytes, on_disk);

  CheckpointData r = read_checkpoint(w.path);
  EXPECT_EQ(r.step, 10);
  expect_same(d.model, r.model);
  expect_same(d.optimizer, r.optimizer);
  EXPECT_EQ(r.state["step"], 10);
  EXPECT_EQ(r.state["slug"], "my-run");
  EXPECT_EQ(r.state["counters"]["records"], 80);
  EXPECT_EQ(r.state["files"][kModelFile], sha256_hex(slurp(w.path + "/model.safetensors")));
  // The runtime's fields keep their order; step and files come after them.
  EXPECT_EQ(r.state.begin().key(), "slug");
  EXPECT_EQ(slurp(w.path + "/COMPLETE"), sha256_hex(slurp(w.path + "/state.json")) + "  state.json\n");
  // A trailing slash names the same folder.
  EXPECT_EQ(read_checkpoint(w.path + "/").step, 10);
}

TEST(Checkpoint, EmptyTensorsAndStepZero) {
  TempDir tmp;
  CheckpointData d;
  d.state = nullptr;  // taken as {}
  WriteResult w = write_checkpoint(tmp.location(), "r", d);
  CheckpointData r = read_checkpoint(w.path);
  EXPECT_EQ(r.step, 0);
  EXPECT_TRUE(r.model.empty());
  EXPECT_TRUE(r.optimizer.empty());
}

TEST(Checkpoint, LatestIsTheNewestCompleteByNumber) {
  TempDir tmp;
  auto loc = tmp.location();
  EXPECT_EQ(find_latest(loc, "r"), std::nullopt);  // no run folder yet
  write_checkpoint(loc, "r", sample(9));
  write_checkpoint(loc, "r", sample(10));
  write_checkpoint(loc, "r", sample(2));
  write_checkpoint(loc, "other", sample(50));
  EXPECT_EQ(find_latest(loc, "r"), tmp.path() + "/r/step-10");
  EXPECT_EQ(find_latest(loc, "other"), tmp.path() + "/other/step-50");
  // Newer folders that are not complete checkpoints are ignored...
  std::string run = tmp.path() + "/r";
  fs::create_directories(run + "/step-11");              // no COMPLETE
  fs::create_directories(run + "/step-12.partial-999");  // being written
  spit(run + "/step-12.partial-999/COMPLETE", "");       // even with COMPLETE
  fs::create_directories(run + "/step-13x");             // not ours
  fs::create_directories(run + "/step-+14");
  fs::create_directories(run + "/step-99999999999999999999");  // past int64
  spit(run + "/step-99999999999999999999/COMPLETE", "");
  EXPECT_EQ(find_latest(loc, "r"), run + "/step-10");
  // ...and so is a folder that loses its COMPLETE.
  fs::remove(run + "/step-10/COMPLETE");
  EXPECT_EQ(find_latest(loc, "r"), run + "/step-9");
}

TEST(Checkpoint, PartialFoldersAreCleanedByTheNextWrite) {
  TempDir tmp;
  auto loc = tmp.location();
  std::string run = tmp.path() + "/r";
  write_checkpoint(loc, "r", sample(1));
  fs::create_directories(run + "/step-2.partial-12345");
  spit(run + "/step-2.partial-12345/model.safetensors", "half");
  fs::create_directories(run + "/step-1.old-12345");  // a delete cut short (no COMPLETE)
  EXPECT_EQ(find_latest(loc, "r"), run + "/step-1");
  write_checkpoint(loc, "r", sample(3));
  EXPECT_EQ(names_in(run), (std::vector<std::string>{"step-1", "step-3"}));
}

TEST(Checkpoint, ReplacingAnExistingStep) {
  TempDir tmp;
  auto loc = tmp.location();
  std::string run = tmp.path() + "/r";
  write_checkpoint(loc, "r", sample(5, 1));
  write_checkpoint(loc, "r", sample(5, 2));
  EXPECT_EQ(names_in(run), (std::vector<std::string>{"step-5"}));
  CheckpointData r = read_checkpoint(run + "/step-5");
  EXPECT_EQ(r.model["layer/b"].values[2], 7.0f);
  // An incomplete step-5 (a delete cut short) is replaced too.
  fs::remove(run + "/step-5/COMPLETE");
  write_checkpoint(loc, "r", sample(5, 3));
  EXPECT_EQ(read_checkpoint(run + "/step-5").model["layer/b"].values[2], 8.0f);
}

// A crash between renaming the old step-<n> aside and renaming the new one in
// leaves only step-<n>.old-<pid>: it is still the latest, and the next write
// puts it back or deletes it.
TEST(Checkpoint, AReplacedCheckpointStandsInUntilItsReplacementArrives) {
  TempDir tmp;
  auto loc = tmp.location();
  std::string run = tmp.path() + "/r";
  write_checkpoint(loc, "r", sample(4));
  write_checkpoint(loc, "r", sample(5, 1));
  fs::rename(run + "/step-5", run + "/step-5.old-777");
  fs::create_directories(run + "/step-5.partial-777");
  ASSERT_EQ(find_latest(loc, "r"), run + "/step-5.old-777");
  EXPECT_EQ(read_checkpoint(run + "/step-5.old-777").model["layer/b"].values[2], 6.0f);
  // A complete step-5 wins over the old one.
  write_checkpoint(loc, "r", sample(3));  // cleaning puts step-5 back
  EXPECT_EQ(names_in(run), (std::vector<std::string>{"step-3", "step-4", "step-5"}));
  EXPECT_EQ(find_latest(loc, "r"), run + "/step-5");
  fs::create_directories(run + "/step-5.old-1");
  spit(run + "/step-5.old-1/COMPLETE", "");
  EXPECT_EQ(find_latest(loc, "r"), run + "/step-5");
}

TEST(Checkpoint, KeepTheNewest) {
  TempDir tmp;
  auto loc = tmp.location();
  std::string run = tmp.path() + "/r";
  for (int64_t s : {2, 4, 6, 8, 10}) write_checkpoint(loc, "r", sample(s));
  fs::create_directories(run + "/step-3");   // incomplete, older than the kept ones: deleted
  fs::create_directories(run + "/step-12");  // incomplete, newer: left alone
  keep_newest(loc, "r", 0);                  // keep all
  EXPECT_EQ(names_in(run).size(), 7u);
  keep_newest(loc, "r", 2);
  EXPECT_EQ(names_in(run), (std::vector<std::string>{"step-10", "step-12", "step-8"}));
  keep_newest(loc, "r", 5);
  EXPECT_EQ(names_in(run).size(), 3u);
  keep_newest(loc, "r", 1);
  EXPECT_EQ(names_in(run), (std::vector<std::string>{"step-10", "step-12"}));
  EXPECT_EQ(read_checkpoint(run + "/step-10").step, 10);
  keep_newest(loc, "nothing-yet", 1);
}

TEST(Checkpoint, FolderNames) {
  EXPECT_EQ(step_of_folder("step-0"), 0);
  EXPECT_EQ(step_of_folder("step-9223372036854775807"), INT64_MAX);
  EXPECT_EQ(step_of_folder("step-9223372036854775808"), std::nullopt);
  for (const char* bad : {"step-", "step--1", "step-+1", "step-1a", "Step-1", "step-1.partial-2", "step- 1"})
    EXPECT_EQ(step_of_folder(bad), std::nullopt) << bad;
  EXPECT_EQ(parse_folder("step-3.partial-9")->kind, FolderKind::partial);
  EXPECT_EQ(parse_folder("step-3.old-9")->kind, FolderKind::old);
  EXPECT_EQ(parse_folder("step-3.other"), std::nullopt);
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Checkpoint, S3WithoutCredentialsIsRefused) {  // with credentials: store_s3_test.cpp
  Location s3{"s3://bucket/prefix", true, "bucket", "prefix"};
  EXPECT_EQ(code_of([&] { write_checkpoint(s3, "r", sample(1)); }), "E-ENV-002");
  EXPECT_EQ(code_of([&] { find_latest(s3, "r"); }), "E-ENV-002");
  EXPECT_EQ(code_of([&] { read_checkpoint("s3://bucket/prefix/r/step-1"); }), "E-ENV-002");
}

TEST(Checkpoint, TheSameProtocolInMemory) {
  auto store = memory_store();
  write_checkpoint(*store, sample(1));
  write_checkpoint(*store, sample(2));
  write_checkpoint(*store, sample(2, 5));
  EXPECT_EQ(find_latest(*store), "step-2");
  EXPECT_EQ(read_checkpoint(*store, "step-2").model["layer/b"].values[2], 7.0f);
  keep_newest(*store, 1);
  EXPECT_EQ(store->list(), (std::vector<std::string>{"step-2"}));
}

}  // namespace
}  // namespace sx::ckpt
