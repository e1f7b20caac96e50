#pragma once
// How the nodes of a run meet before the first step (docs/nodes.md): node 0
// hosts the rendezvous store; each node picks a fresh attempt's key prefix
// (node 0 makes it), shows its hello, reads every other node's and compares
// them with node 0's. Every node sees the same hellos, so every node refuses
// a mismatch with the same message.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "runtime/communicator.h"
#include "runtime/rendezvous_store.h"

namespace sx {

// What must be the same on every node. The protocol and sexpgpu versions,
// SEXPGPU_NODES and the node's own rank and address are added by meet().
struct NodeHello {
  std::string slug, graph;
  std::vector<std::pair<std::string, std::string>> knobs;  // the selection: name, value (JSON text)
  GradientPrecision gradients = GradientPrecision::f32;
  std::string device = "cpu";  // --device: a node's numbers are its device's
  int gpus = 1;                // the GPUs a node trains on (1 on the cpu): the ranks of the gradient's sum
  std::string resume;          // --resume as given ("-": none): node 0 sends what it reads
};

struct Experiment;
// This node's hello: the experiment's slug and selection, the graph's hash,
// SEXPGPU_NODE_GRADIENTS, the device and its GPUs, whether (not where) the run resumes.
NodeHello node_hello(const Experiment& x, const std::string& graph_hash, const Environment& env);

// The meeting, kept by the communicator for the run (node 0's server must
// outlive every other node's last read).
struct Meeting {
  std::unique_ptr<RendezvousServer> server;  // node 0's
  std::unique_ptr<RendezvousClient> store;
  std::string prefix;   // this attempt's keys: "<attempt>/"
  std::string address;  // where the other nodes reach this one
  Clock::time_point deadline;
};

// The handshake alone; E-NODE-002, -003, -006, -008.
Meeting meet(const NodeSetup& setup, const NodeHello& hello);

// What differs between node 0's hello and another's, each as "<what> is <a>
// on node <r> but <b> on node 0"; nothing when they agree.
std::vector<std::string> hello_differences(const nlohmann::ordered_json& node0, const nlohmann::ordered_json& other);

// The local address of this machine's route to `host` (a UDP connect, then
// getsockname): what another machine reaches this one at. E-NODE-008 when none.
std::string route_address(const Rendezvous& to);

// Gloo's full mesh over the meeting's store (gloo_communicator.cpp); E-NODE-001 without Gloo.
std::unique_ptr<Communicator> connect_gloo(const NodeSetup& setup, Meeting meeting);

}  // namespace sx
