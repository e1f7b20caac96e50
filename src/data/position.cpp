#include "data/position.h"

#include "util/error.h"

namespace sx::data {
namespace {

template <typename J>
Position from_json(const J& j) {
  try {
    Position p;
    p.loader = j.at("loader").template get<std::string>();
    p.seed = j.at("seed").template get<uint64_t>();
    p.shuffle = j.at("shuffle").template get<bool>();
    p.windows = j.at("windows").template get<int64_t>();
    p.epoch = j.at("epoch").template get<int64_t>();
    p.index = j.at("index").template get<int64_t>();
    if (j.contains("shard")) p.shard = j.at("shard").template get<std::string>();
    if (j.contains("offset")) p.offset = j.at("offset").template get<int64_t>();
    return p;
  } catch (const nlohmann::json::exception& e) {
    throw UserError(Code::DATA_014, {}, fmt::format("a loader position is malformed: {}", e.what()));
  }
}

}  // namespace

nlohmann::ordered_json position_to_json(const Position& p) {
  return {{"loader", p.loader}, {"seed", p.seed},   {"shuffle", p.shuffle}, {"windows", p.windows},
          {"epoch", p.epoch},   {"index", p.index}, {"shard", p.shard},     {"offset", p.offset}};
}

Position position_from_json(const nlohmann::ordered_json& j) { return from_json(j); }
Position position_from_json(const nlohmann::json& j) { return from_json(j); }

}  // namespace sx::data
