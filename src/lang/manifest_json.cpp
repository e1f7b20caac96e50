#include "lang/manifest_json.h"

namespace sx {

nlohmann::ordered_json to_json(const Value& v) {
  switch (v.kind) {
    case Kind::Int: return v.i;
    case Kind::Float: return v.f;
    case Kind::Bool: return v.b;
    case Kind::String:
    case Kind::Symbol: return v.s;
    case Kind::Keyword: return ":" + v.s;
    case Kind::List: {
      auto out = nlohmann::ordered_json::array();
      for (const auto& x : v.items) out.push_back(to_json(*x));
      return out;
    }
    case Kind::Nil: return nullptr;
    case Kind::Object: return repr(v);
  }
  return nullptr;
}

nlohmann::ordered_json manifest_json(const Experiment& x) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& k : x.manifest)
    out.push_back({{"name", k.name}, {"value", to_json(*k.value)}, {"source", k.source}});
  return out;
}

}  // namespace sx
