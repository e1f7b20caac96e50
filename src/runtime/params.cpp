#include "runtime/params.h"

#include <fmt/format.h>

#include <algorithm>

#include "backend/ref/ref.h"
#include "util/error.h"

namespace sx {

int64_t ParamStore::count() const {
  int64_t n = 0;
  for (const auto& p : info) n += p.shape.numel();
  return n;
}

std::vector<ParamInfo> params_of(const Graph& g) {
  std::vector<ParamInfo> out;
  for (const auto& [path, id] : g.params()) {
    const Node& n = g.node(id);
    out.push_back({path, n.shape, n.attrs.init, n.span});
  }
  return out;
}

void check_same_params(const std::vector<ParamInfo>& train, const Graph& other, const std::string& pass_name) {
  for (const auto& [path, id] : other.params()) {
    const Node& n = other.node(id);
    auto it = std::find_if(train.begin(), train.end(), [&](const ParamInfo& p) { return p.path == path; });
    if (it == train.end())
      throw UserError(Code::SHAPE_007, n.span,
                      fmt::format("pass `{}` makes parameter `{}`, which the training graph does not have", pass_name,
                                  path),
                      "a pass can only use the parameters that training makes and updates");
    if (!(it->shape == n.shape)) {
      UserError e(Code::SHAPE_007, n.span,
                  fmt::format("parameter `{}` is {} in pass `{}` but {} in training", path, n.shape.str(), pass_name,
                              it->shape.str()));
      e.first().notes.push_back("made for training at " + Sources::global().where(it->span));
      throw e;
    }
  }
}

uint32_t path_stream(const std::string& path) {
  uint32_t h = 2166136261u;  // FNV-1a: stable across platforms and standard libraries
  for (unsigned char c : path) h = (h ^ c) * 16777619u;
  return h;
}

ParamStore init_params(const std::vector<ParamInfo>& info, uint64_t seed) {
  ParamStore store;
  store.info = info;
  for (const auto& p : info) {
    Node n;
    n.op = Op::Param;
    n.shape = p.shape;
    n.attrs.init = p.init;
    n.path = p.path;
    store.values[p.path] = ref::init_param<float>(n, seed, path_stream(p.path)).f;
  }
  return store;
}

}  // namespace sx
