#include "runtime/node_meeting.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "lang/manifest_json.h"
#include "util/error.h"
#include "util/version.h"

namespace sx {

namespace {

using Json = nlohmann::ordered_json;

// Raised when the hello changes meaning.
constexpr int kProtocol = 3;  // 2: the device; 3: its GPUs

std::string fresh_attempt() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}", rd(), rd());
}

std::string seconds_text(double s) { return fmt::format("{:g} s", s); }

std::string ranks_text(const std::vector<int>& ranks) {
  std::vector<std::string> t;
  for (int r : ranks) t.push_back(std::to_string(r));
  return fmt::format("{}", fmt::join(t, ", "));
}

Json hello_json(const NodeSetup& setup, const NodeHello& h, const std::string& address) {
  Json knobs = Json::object();
  for (const auto& [name, value] : h.knobs) knobs[name] = value;
  return {{"protocol", kProtocol},
          {"version", SEXPGPU_VERSION},
          {"nodes", setup.nodes},
          {"gradients", std::string(to_string(h.gradients))},
          {"device", h.device},
          {"gpus", h.gpus},
          {"resume", h.resume},
          {"slug", h.slug},
          {"knobs", knobs},
          {"graph", h.graph},
          {"rank", setup.rank},
          {"address", address},
          {"pid", static_cast<int64_t>(getpid())}};
}

std::string value_text(const Json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

}  // namespace

std::vector<std::string> hello_differences(const Json& node0, const Json& other) {
  std::vector<std::string> out;
  const std::string r = std::to_string(other.value("rank", -1));
  auto differ = [&](const char* field, const char* what) {
    if (node0.value(field, Json()) != other.value(field, Json()))
      out.push_back(fmt::format("{} is {} on node {} but {} on node 0", what, value_text(other.value(field, Json())), r,
                                value_text(node0.value(field, Json()))));
  };
  differ("protocol", "the nodes' protocol");
  differ("version", "the sexpgpu version");
  differ("nodes", "SEXPGPU_NODES");
  differ("gradients", "SEXPGPU_NODE_GRADIENTS");
  differ("device", "the device");
  differ("gpus", "the number of GPUs (SEXPGPU_DEVICES)");
  differ("resume", "--resume");
  const Json& k0 = node0.at("knobs");
  const Json& k1 = other.at("knobs");
  for (const auto& [name, v] : k0.items()) {
    std::string theirs = k1.contains(name) ? value_text(k1.at(name)) : "unset";
    if (theirs != value_text(v))
      out.push_back(fmt::format("knob {} is {} on node {} but {} on node 0", name, theirs, r, value_text(v)));
  }
  for (const auto& [name, v] : k1.items())
    if (!k0.contains(name))
      out.push_back(fmt::format("knob {} is {} on node {} but unset on node 0", name, value_text(v), r));
  // Knobs that differ change the slug and the graph too: those alone when nothing else says why.
  if (out.empty()) differ("slug", "the slug");
  if (out.empty()) differ("graph", "the graph");
  return out;
}

std::string route_address(const Rendezvous& to) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  std::string port = std::to_string(to.port);
  if (int rc = getaddrinfo(to.host.c_str(), port.c_str(), &hints, &res); rc != 0)
    throw UserError(Code::NODE_003, {},
                    fmt::format("SEXPGPU_RENDEZVOUS host {} does not resolve ({})", to.host, gai_strerror(rc)),
                    "give node 0's address or a name every node resolves");
  std::string address, why = "no address";
  for (addrinfo* a = res; a && address.empty(); a = a->ai_next) {
    int fd = ::socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    char text[INET6_ADDRSTRLEN] = {};
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
      const void* addr = local.ss_family == AF_INET6
                             ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr)
                             : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr);
      if (inet_ntop(local.ss_family, addr, text, sizeof text)) address = text;
    } else {
      why = std::strerror(errno);
    }
    ::close(fd);
  }
  freeaddrinfo(res);
  if (address.empty())
    throw UserError(Code::NODE_008, {}, fmt::format("no route from this node to node 0's host {}: {}", to.host, why),
                    "set SEXPGPU_NODE_ADDRESS to this node's address on the network node 0 is on");
  return address;
}

NodeHello node_hello(const Experiment& x, const std::string& graph_hash, const Environment& env) {
  NodeHello hello;
  hello.slug = x.slug;
  hello.graph = graph_hash;
  for (const auto& k : manifest_json(x))
    hello.knobs.emplace_back(k.at("name").get<std::string>(), k.at("value").dump());
  hello.gradients = env.node_gradients;
  hello.device = std::string(to_string(env.device));
  if (env.device == Device::cuda) hello.gpus = std::max<int>(1, static_cast<int>(env.devices.size()));
  // Whether (not where) the nodes resume: node 0 reads the checkpoint for all of them.
  hello.resume = !env.resume ? "-" : env.resume->latest ? "latest" : "a checkpoint";
  return hello;
}

Meeting meet(const NodeSetup& setup, const NodeHello& hello) {
  Meeting m;
  m.deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(setup.timeout_s));
  m.address = setup.address ? *setup.address : route_address(setup.rendezvous);
  if (setup.rank == 0) m.server = std::make_unique<RendezvousServer>(setup.rendezvous);
  m.store = std::make_unique<RendezvousClient>(setup.rendezvous, m.deadline);
  RendezvousClient& store = *m.store;
  if (setup.rank == 0) store.set("attempt", fresh_attempt());
  auto attempt = store.wait("attempt", m.deadline);
  if (!attempt)
    throw UserError(Code::NODE_003, {},
                    fmt::format("node 0 at {} did not open the meeting within SEXPGPU_NODE_TIMEOUT ({})", store.where(),
                                seconds_text(setup.timeout_s)),
                    "start node 0 with the same SEXPGPU_RENDEZVOUS");
  m.prefix = *attempt + "/";

  Json mine = hello_json(setup, hello, m.address);
  if (!store.set(m.prefix + "hello/" + std::to_string(setup.rank), mine.dump())) {
    auto other = Json::parse(store.get(m.prefix + "hello/" + std::to_string(setup.rank)).value_or("{}"));
    throw UserError(Code::NODE_002, {},
                    fmt::format("node rank {} is taken by another node (pid {} at {})", setup.rank,
                                other.value("pid", int64_t{0}), other.value("address", std::string("?"))),
                    "give every node its own SEXPGPU_NODE_RANK, 0 to SEXPGPU_NODES - 1");
  }
  std::vector<Json> hellos(static_cast<size_t>(setup.nodes));
  std::vector<int> missing;
  for (int r = 0; r < setup.nodes; ++r) {
    auto h = store.wait(m.prefix + "hello/" + std::to_string(r), m.deadline);
    if (h)
      hellos[static_cast<size_t>(r)] = Json::parse(*h);
    else
      missing.push_back(r);
  }
  if (!missing.empty())
    throw UserError(
        Code::NODE_003, {},
        fmt::format("node{} {} did not arrive at SEXPGPU_RENDEZVOUS {} within SEXPGPU_NODE_TIMEOUT ({})",
                    missing.size() > 1 ? "s" : "", ranks_text(missing), store.where(), seconds_text(setup.timeout_s)),
        fmt::format("start every node, 0 to {}, with the same SEXPGPU_NODES and SEXPGPU_RENDEZVOUS", setup.nodes - 1));
  std::vector<std::string> differences;
  for (int r = 1; r < setup.nodes; ++r)
    for (auto& d : hello_differences(hellos[0], hellos[static_cast<size_t>(r)])) differences.push_back(d);

  // Node 0 holds the store until every node has read every hello.
  store.set(m.prefix + "met/" + std::to_string(setup.rank), "1");
  if (setup.rank == 0)
    for (int r = 1; r < setup.nodes; ++r)
      if (!store.wait(m.prefix + "met/" + std::to_string(r), m.deadline))
        throw UserError(
            Code::NODE_003, {},
            fmt::format("node {} left the meeting at SEXPGPU_RENDEZVOUS {} before it ended", r, store.where()),
            "see that node's error; start every node again");
  if (!differences.empty())
    throw UserError(Code::NODE_002, {}, fmt::format("the nodes disagree: {}", fmt::join(differences, "; ")),
                    "start every node with the same file, selection, SEXPGPU_NODES and SEXPGPU_NODE_GRADIENTS");
  return m;
}

std::unique_ptr<Communicator> meet_nodes(const NodeSetup& setup, const NodeHello& hello) {
  return connect_gloo(setup, meet(setup, hello));
}

}  // namespace sx
