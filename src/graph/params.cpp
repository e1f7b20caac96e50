#include "graph/params.h"

#include <fmt/format.h>

#include <string_view>
#include <unordered_map>

#include "util/error.h"

namespace sx {

std::vector<ParamInfo> params_of(const Graph& g) {
  std::vector<ParamInfo> out;
  for (const auto& [path, id] : g.params()) {
    const Node& n = g.node(id);
    out.push_back({path, n.shape, n.attrs.init, n.span});
  }
  return out;
}

void check_same_params(const std::vector<ParamInfo>& train, const Graph& other, const std::string& pass_name) {
  std::unordered_map<std::string_view, const ParamInfo*> by_path;  // a search per param was quadratic
  for (const auto& p : train) by_path.emplace(p.path, &p);
  for (const auto& [path, id] : other.params()) {
    const Node& n = other.node(id);
    auto found = by_path.find(path);
    const ParamInfo* it = found == by_path.end() ? nullptr : found->second;
    if (!it)
      throw UserError(
          Code::SHAPE_007, n.span,
          fmt::format("pass `{}` makes parameter `{}`, which the training graph does not have", pass_name, path),
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

}  // namespace sx
