#include "runtime/params.h"

#include <gtest/gtest.h>

#include <cstring>

#include "backend/ref/ref.h"

namespace sx {
namespace {

Init init(Init::Kind kind, double a = 0, double b = 0) {
  Init i;
  i.kind = kind;
  i.a = a;
  i.b = b;
  return i;
}

// The runtime's fast initialisation draws exactly the reference backend's
// values, whatever the thread count and wherever a thread's slice starts.
TEST(InitParams, BitIdenticalToTheReferenceForAnyThreadCount) {
  std::vector<ParamInfo> info = {
      {"embed", Shape({33, 7}), init(Init::Normal, 0.02), {}},
      {"blocks.0.w", Shape({5, 3, 3}), init(Init::Normal, 1.0), {}},
      {"blocks.0.b", Shape({13}), init(Init::Uniform, -0.5, 0.25), {}},
      {"norm.g", Shape({9}), init(Init::Ones), {}},
      {"norm.b", Shape({9}), init(Init::Zeros), {}},
      {"one", Shape({1}), init(Init::Normal, 0.5), {}},
  };
  for (int threads : {1, 2, 3, 8}) {
    ParamStore s = init_params(info, 12345, threads);
    for (const auto& p : info) {
      Node n;
      n.op = Op::Param;
      n.shape = p.shape;
      n.attrs.init = p.init;
      n.path = p.path;
      std::vector<float> want = ref::init_param<float>(n, 12345, path_stream(p.path)).f;
      const std::vector<float>& got = s.values.at(p.path);
      ASSERT_EQ(got.size(), want.size()) << p.path;
      EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0)
          << p.path << " with " << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace sx
