#include "runtime/params.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "graph/philox.h"
#include "util/error.h"

namespace sx {

int64_t ParamStore::count() const {
  int64_t n = 0;
  for (const auto& p : info) n += p.shape.numel();
  return n;
}

uint32_t path_stream(const std::string& path) {
  uint32_t h = 2166136261u;  // FNV-1a: stable across platforms and standard libraries
  for (unsigned char c : path) h = (h ^ c) * 16777619u;
  return h;
}

namespace {

// Elements [begin, end) of a parameter, as ref::init_param draws them, but with
// one Philox block per two normals (element e's uniforms are words 2e % 4 and
// 2e % 4 + 1 of block e / 2) instead of one block per uniform.
void fill(float* out, const Init& init, uint64_t seed, uint32_t stream, int64_t begin, int64_t end) {
  const philox::Key key{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  switch (init.kind) {
    case Init::Zeros:
    case Init::Ones:
      std::fill(out + begin, out + end, init.kind == Init::Ones ? 1.0f : 0.0f);
      return;
    case Init::Uniform:
      for (int64_t e = begin; e < end; ++e) {
        uint32_t b = philox::philox4x32_10({static_cast<uint32_t>(e / 4), stream, 0, 0}, key)[e % 4];
        out[e] = static_cast<float>(init.a + (init.b - init.a) * philox::uniform(b));
      }
      return;
    case Init::Normal:
      for (int64_t e = begin; e < end;) {
        philox::Block b = philox::philox4x32_10({static_cast<uint32_t>(e / 2), stream, 0, 0}, key);
        for (int64_t half = e % 2; half < 2 && e < end; ++half, ++e) {
          double u1 = 1.0 - philox::uniform(b[2 * half]);
          double u2 = philox::uniform(b[2 * half + 1]);
          out[e] = static_cast<float>(init.a * (std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2)));
        }
      }
      return;
  }
}

}  // namespace

ParamStore init_params(const std::vector<ParamInfo>& info, uint64_t seed, int threads) {
  ParamStore store;
  store.info = info;
  for (const auto& p : info) store.values[p.path].resize(static_cast<size_t>(p.shape.numel()));
  // Every element depends on its index alone: the work is cut into equal
  // slices of all the parameters, one per thread.
  std::vector<std::thread> pool;
  int n = std::max(1, threads);
  for (int t = 0; t < n; ++t) {
    auto slice = [&, t] {
      for (const auto& p : info) {
        int64_t numel = p.shape.numel();
        fill(store.values[p.path].data(), p.init, seed, path_stream(p.path), numel * t / n, numel * (t + 1) / n);
      }
    };
    if (t + 1 < n)
      pool.emplace_back(slice);
    else
      slice();
  }
  for (auto& th : pool) th.join();
  return store;
}

}  // namespace sx
