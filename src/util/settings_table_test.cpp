// settings.def's table against what reads it: every variable known and
// refused with its name when its value is bad, every flag found, and
// docs/environment.md's variables table generated from it.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "util/environment.h"
#include "util/environment_test_util.h"
#include "util/error.h"

namespace sx {
namespace {
using environment_test::parse;

TEST(Environment, UnknownVariables) {
  auto w = unknown_variables({"SEXPGPU_DEVCE", "SEXPGPU_DEVICE", "PATH", "AWS_PROFILE", "SEXPGPU_ZZZZZZZZZZZZ"});
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], "SEXPGPU_DEVCE is not a variable sexpgpu reads; did you mean SEXPGPU_DEVICE?");
  EXPECT_EQ(w[1], "SEXPGPU_ZZZZZZZZZZZZ is not a variable sexpgpu reads");
}

// The variables table of docs/environment.md, built from settings.def.
std::string docs_table() {
  std::string out = "| variable | values | default | meaning |\n| --- | --- | --- | --- |\n";
  for (const auto& s : settings()) {
    std::string meaning(s.meaning);
    if (s.flag_kind == FlagKind::alias) meaning += fmt::format(" Flag: `{}`", s.flag);
    out += fmt::format("| `{}` | {} | {} | {} |\n", s.variable, s.values, s.dflt, meaning);
  }
  return out;
}

TEST(Environment, DocsTableIsTheSettingsList) {
  const char* root = std::getenv("SEXPGPU_SOURCE_DIR");
  std::string path = std::string(root ? root : SEXPGPU_SOURCE_DIR_DEFAULT) + "/docs/environment.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  std::string doc = text.str();
  size_t begin = doc.find("| variable |");
  ASSERT_NE(begin, std::string::npos) << path << " has no variables table";
  size_t end = doc.find("\n\n", begin);
  EXPECT_EQ(doc.substr(begin, end == std::string::npos ? end : end + 1 - begin), docs_table())
      << "docs/environment.md's variables table differs from src/util/settings.def";
}

TEST(Environment, EveryRowIsReadAndKnown) {
  const auto& known = known_variables();
  for (const auto& s : settings()) {
    std::string name(s.variable);
    EXPECT_NE(std::find(known.begin(), known.end(), name), known.end()) << name;
    // Read: a value no parser accepts is refused naming the variable (SYVAIN_METRICS_FOLDER_ID
    // takes any text, SYVAIN_METRICS_API_KEY any key).
    if (name == "SYVAIN_METRICS_FOLDER_ID" || name == "SYVAIN_METRICS_API_KEY") continue;
    bool refused = false;
    for (const char* value : {"\x01?", "/", "s3:x", ","}) {
      try {
        parse({{name, value}});
      } catch (const UserError& e) {
        EXPECT_EQ(e.diagnostics()[0].message.rfind(name + ": expected ", 0), 0u) << e.diagnostics()[0].message;
        refused = true;
      }
    }
    EXPECT_TRUE(refused) << name << " accepts every value tried";
    if (!s.flag.empty()) {
      EXPECT_EQ(setting_of_flag(s.flag), &s) << s.flag;
    }
  }
  EXPECT_EQ(setting_of_flag("--steps"), nullptr);
  EXPECT_EQ(setting_of_flag(""), nullptr);
}

}  // namespace
}  // namespace sx
