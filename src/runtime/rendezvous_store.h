#pragma once
// Where the nodes of a run meet (docs/nodes.md): a small key-value store over
// TCP that node 0 hosts on SEXPGPU_RENDEZVOUS in its own process, for the
// handshake and for Gloo's exchange of addresses. Keys are set once; a read
// waits for its key until a deadline. Every request and its reply go in one
// write, with TCP_NODELAY (Nagle and delayed ACKs cost ~100 ms a connect).
#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "util/environment.h"

namespace sx {

using Clock = std::chrono::steady_clock;

// Node 0's side: listens on `where` from construction (E-NODE-006 when it
// cannot) and answers on its own thread until destroyed.
class RendezvousServer {
 public:
  explicit RendezvousServer(const Rendezvous& where);
  ~RendezvousServer();
  RendezvousServer(const RendezvousServer&) = delete;
  RendezvousServer& operator=(const RendezvousServer&) = delete;
  int port() const { return port_; }  // the one bound (where.port, or the kernel's for 0)

 private:
  void serve();
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  int port_ = 0;
  std::map<std::string, std::string> values_;
  std::thread thread_;
};

// Every node's side (node 0's too), one connection.
class RendezvousClient {
 public:
  // Connects, retrying while nobody listens yet, until `deadline`: E-NODE-003 after it.
  RendezvousClient(const Rendezvous& where, Clock::time_point deadline);
  ~RendezvousClient();
  RendezvousClient(const RendezvousClient&) = delete;
  RendezvousClient& operator=(const RendezvousClient&) = delete;

  // Sets `key` once: false (and nothing changed) when it is already set.
  bool set(const std::string& key, const std::string& value);
  std::optional<std::string> get(const std::string& key);
  // Polls for `key` until `deadline`; nothing when it passed first.
  std::optional<std::string> wait(const std::string& key, Clock::time_point deadline);

  // Bounds each request from now on (none by default); a request that takes longer is E-NODE-003.
  void set_timeout(std::chrono::milliseconds timeout);

  // "host:port" as the messages name it.
  const std::string& where() const { return where_; }

 private:
  std::string request(char op, const std::string& key, const std::string& value);
  int fd_ = -1;
  std::string where_;
};

}  // namespace sx
