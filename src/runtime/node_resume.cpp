#include "runtime/node_resume.h"

#include <cstring>

namespace sx {

namespace {

using Json = nlohmann::ordered_json;

// [u64 header length][header JSON][every tensor's floats, in the header's order].
std::string pack(const std::string& text, const std::optional<ResumePoint>& p) {
  Json head = {{"text", text}};
  std::string floats;
  if (p) {
    head["path"] = p->path;
    head["step"] = p->step;
    head["state"] = p->data.state;
    Json tensors = Json::array();
    auto add = [&](const char* part, const st::Tensors& ts) {
      for (const auto& [name, t] : ts) {
        tensors.push_back({{"part", part}, {"name", name}, {"shape", t.shape}, {"n", t.values.size()}});
        floats.append(reinterpret_cast<const char*>(t.values.data()), t.values.size() * sizeof(float));
      }
    };
    add("model", p->data.model);
    add("optimizer", p->data.optimizer);
    head["tensors"] = tensors;
  }
  std::string h = head.dump();
  uint64_t len = h.size();
  std::string out(reinterpret_cast<const char*>(&len), sizeof len);
  return out + h + floats;
}

std::string unpack(const std::string& bytes, std::optional<ResumePoint>& p) {
  uint64_t len = 0;
  std::memcpy(&len, bytes.data(), sizeof len);
  Json head = Json::parse(bytes.substr(sizeof len, len));
  if (!head.contains("path")) return head.at("text").get<std::string>();
  p.emplace();
  p->path = head.at("path").get<std::string>();
  p->step = head.at("step").get<int64_t>();
  p->data.step = p->step;
  p->data.state = head.at("state");
  const char* at = bytes.data() + sizeof len + len;
  for (const auto& t : head.at("tensors")) {
    st::TensorData d;
    d.shape = t.at("shape").get<std::vector<int64_t>>();
    d.values.resize(t.at("n").get<size_t>());
    std::memcpy(d.values.data(), at, d.values.size() * sizeof(float));
    at += d.values.size() * sizeof(float);
    (t.at("part") == "model" ? p->data.model : p->data.optimizer)[t.at("name").get<std::string>()] = std::move(d);
  }
  return head.at("text").get<std::string>();
}

}  // namespace

std::string share_resume(Communicator& comm, RunCheckpoints& checkpoints, const ResumeFrom& from) {
  std::string bytes, text;
  if (comm.leads()) {
    text = checkpoints.locate(from);
    bytes = pack(text, checkpoints.resume());
  }
  uint64_t size = bytes.size();
  comm.broadcast(&size, sizeof size, 0);
  bytes.resize(size);
  comm.broadcast(bytes.data(), size, 0);
  if (comm.leads()) return text;
  std::optional<ResumePoint> point;
  text = unpack(bytes, point);
  if (point) checkpoints.adopt(std::move(*point));
  return text;
}

}  // namespace sx
