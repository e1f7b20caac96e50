#include "util/glob.h"

#include <gtest/gtest.h>

namespace sx {
namespace {

TEST(ModelPathGlob, StarCrossesSegments) {
  EXPECT_TRUE(model_path_glob_match("*", ""));
  EXPECT_TRUE(model_path_glob_match("*", "blocks/0/attn/wq"));
  EXPECT_TRUE(model_path_glob_match("*/ln*/*", "blocks/0/ln1/gain"));
  EXPECT_TRUE(model_path_glob_match("blocks/*/bias", "blocks/0/mlp/fc/bias"));
  EXPECT_TRUE(model_path_glob_match("*bias", "head/bias"));
  EXPECT_FALSE(model_path_glob_match("*bias", "head/bias2"));
  EXPECT_FALSE(model_path_glob_match("blocks/*", "head/bias"));
}

TEST(ModelPathGlob, QuestionMarkIsOneCharacterSlashIncluded) {
  EXPECT_TRUE(model_path_glob_match("a?b", "a/b"));
  EXPECT_TRUE(model_path_glob_match("blocks/?/w", "blocks/7/w"));
  EXPECT_FALSE(model_path_glob_match("blocks/?/w", "blocks/10/w"));
  EXPECT_FALSE(model_path_glob_match("?", ""));
}

TEST(ModelPathGlob, BracketsAreLiteral) {
  EXPECT_TRUE(model_path_glob_match("w[0]", "w[0]"));
  EXPECT_FALSE(model_path_glob_match("w[01]", "w0"));
}

TEST(DiagnosticGlob, StarStaysWithinASegment) {
  EXPECT_TRUE(diagnostic_glob_match("attn/*", "attn/entropy"));
  EXPECT_TRUE(diagnostic_glob_match("*/entropy", "attn/entropy"));
  EXPECT_TRUE(diagnostic_glob_match("*", "loss"));
  EXPECT_TRUE(diagnostic_glob_match("grad/*", "grad/norm"));
  EXPECT_FALSE(diagnostic_glob_match("*", "grad/norm"));
  EXPECT_FALSE(diagnostic_glob_match("attn*", "attn/entropy"));
  EXPECT_TRUE(diagnostic_glob_match("*/*", "attn/entropy"));
  EXPECT_FALSE(diagnostic_glob_match("*/*", "a/b/c"));
}

TEST(DiagnosticGlob, QuestionMarkIsNotASlash) {
  EXPECT_TRUE(diagnostic_glob_match("gra?/norm", "grad/norm"));
  EXPECT_FALSE(diagnostic_glob_match("grad?norm", "grad/norm"));
  EXPECT_FALSE(diagnostic_glob_match("", "x"));
  EXPECT_TRUE(diagnostic_glob_match("", ""));
}

TEST(DiagnosticGlob, BracketsAreLiteral) {
  EXPECT_TRUE(diagnostic_glob_match("a[1]", "a[1]"));
  EXPECT_FALSE(diagnostic_glob_match("a[12]", "a1"));
}

TEST(SourceGlob, StarStaysWithinASegment) {
  EXPECT_TRUE(source_glob_match("dir/*.bin", "dir/shard-0.bin"));
  EXPECT_FALSE(source_glob_match("dir/*.bin", "dir/sub/shard-0.bin"));
  EXPECT_FALSE(source_glob_match("dir/*.bin", "dir/shard-0.txt"));
  EXPECT_FALSE(source_glob_match("dir*", "dir/a.bin"));
}

TEST(SourceGlob, QuestionMarkAndSets) {
  EXPECT_TRUE(source_glob_match("d/shard-?.bin", "d/shard-3.bin"));
  EXPECT_FALSE(source_glob_match("d?x", "d/x"));
  EXPECT_TRUE(source_glob_match("d/shard-[0-2].bin", "d/shard-1.bin"));
  EXPECT_FALSE(source_glob_match("d/shard-[0-2].bin", "d/shard-3.bin"));
  EXPECT_FALSE(source_glob_match("d[/]x", "d/x"));
}

}  // namespace
}  // namespace sx
