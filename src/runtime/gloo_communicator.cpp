// Several nodes over Gloo's TCP transport. The collectives are Gloo's
// point-to-point sends and receives of unbound buffers, one per peer, so that
// a failure names the peer it came from (the lost rank); every rank gathers
// everything and sums in rank order (communicator.h), which no Gloo
// allreduce promises from 3 ranks up (notes: its ring gives other bits).
#include "runtime/node_meeting.h"
#include "util/error.h"
#include "util/printable.h"

#if SEXPGPU_HAVE_GLOO
#include <fmt/format.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>
#endif

namespace sx {

#if SEXPGPU_HAVE_GLOO

bool have_gloo() { return true; }

namespace {

using std::chrono::milliseconds;

milliseconds to_ms(double s) { return milliseconds(static_cast<int64_t>(s * 1000.0 + 0.5)); }

// Gloo's view of the rendezvous store: this attempt's keys under "gloo/".
class GlooStore final : public gloo::rendezvous::Store {
 public:
  GlooStore(RendezvousClient& store, std::string prefix, Clock::time_point deadline)
      : store_(store), prefix_(std::move(prefix)), deadline_(deadline) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    store_.set(prefix_ + key, std::string(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    auto v = store_.wait(prefix_ + key, deadline_);
    if (!v) timed_out(key);
    return {v->begin(), v->end()};
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, milliseconds(0)); }
  void wait(const std::vector<std::string>& keys, const milliseconds&) override {
    for (const auto& k : keys)
      if (!store_.wait(prefix_ + k, deadline_)) timed_out(k);
  }

 private:
  [[noreturn]] void timed_out(const std::string& key) {
    throw UserError(Code::NODE_003, {},
                    fmt::format("node {} did not connect within SEXPGPU_NODE_TIMEOUT (at {})", key, store_.where()),
                    "start every node again");
  }
  RendezvousClient& store_;
  std::string prefix_;
  Clock::time_point deadline_;
};

// While a collective waits, watches node 0's store for a failure another
// node announced, and aborts the wait: a node a step behind or ahead of the
// lost one's other peers never hears from them again, but stops as soon as
// one of them says so. Polls only while a wait is in flight.
class FailureWatch {
 public:
  FailureWatch(const Rendezvous& where, std::string key, milliseconds timeout)
      : store_(where, Clock::now() + timeout), key_(std::move(key)) {
    store_.set_timeout(timeout);
    thread_ = std::thread([this] { watch(); });
  }
  ~FailureWatch() {
    {
      std::lock_guard lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // Waits for `buffer`'s receive (or send) unless a failure is announced first; false then.
  bool wait(gloo::transport::UnboundBuffer& buffer, bool recv, milliseconds timeout) {
    {
      std::lock_guard lock(m_);
      current_ = &buffer;
      recv_ = recv;
    }
    cv_.notify_all();
    bool done = false;
    try {
      done = recv ? buffer.waitRecv(timeout) : buffer.waitSend(timeout);
    } catch (...) {
      std::lock_guard lock(m_);
      current_ = nullptr;
      throw;
    }
    std::lock_guard lock(m_);
    current_ = nullptr;
    return done;
  }

 private:
  void watch() {
    std::unique_lock lock(m_);
    while (!stop_) {
      cv_.wait_for(lock, milliseconds(50));
      if (stop_ || !current_) continue;
      lock.unlock();
      bool seen = false, gone = false;
      try {
        seen = store_.get(key_).has_value();
      } catch (const UserError&) {
        gone = true;  // node 0's store does not answer: Gloo's own timeout decides
      }
      lock.lock();
      if (gone) return;
      if (seen && current_) recv_ ? current_->abortWaitRecv() : current_->abortWaitSend();
    }
  }

  RendezvousClient store_;
  std::string key_;
  std::mutex m_;
  std::condition_variable cv_;
  gloo::transport::UnboundBuffer* current_ = nullptr;
  bool recv_ = true, stop_ = false;
  std::thread thread_;
};

class GlooCommunicator final : public Communicator {
 public:
  GlooCommunicator(const NodeSetup& setup, Meeting meeting)
      : meeting_(std::move(meeting)),
        grace_(std::min(milliseconds(2000), to_ms(setup.timeout_s) / 4)),
        timeout_(to_ms(setup.timeout_s) - grace_ - grace_ / 2) {
    gloo::transport::tcp::attr attr;
    attr.hostname = meeting_.address;
    try {
      device_ = gloo::transport::tcp::CreateDevice(attr);
    } catch (const std::exception& e) {
      throw UserError(Code::NODE_008, {},
                      fmt::format("this node cannot listen on its address {}: {}", meeting_.address, e.what()),
                      "set SEXPGPU_NODE_ADDRESS to an address of this machine that node 0 can reach");
    }
    context_ = std::make_shared<gloo::rendezvous::Context>(setup.rank, setup.nodes);
    // Gloo waits up to five times its timeout for the first connections:
    // a fifth keeps the meeting inside SEXPGPU_NODE_TIMEOUT.
    context_->setTimeout(std::max(milliseconds(200), timeout_ / 5));
    GlooStore store(*meeting_.store, meeting_.prefix + "gloo/", meeting_.deadline);
    try {
      context_->connectFullMesh(store, device_);
    } catch (const UserError&) {
      throw;
    } catch (const std::exception& e) {
      throw UserError(Code::NODE_003, {},
                      fmt::format("the nodes could not connect to each other: {}", one_line(e.what())),
                      "check that every node can reach every other's SEXPGPU_NODE_ADDRESS (any port)");
    }
    context_->setTimeout(timeout_);
    watch_ = std::make_unique<FailureWatch>(setup.rendezvous, meeting_.prefix + "failed", timeout_);
  }

  int rank() const override { return context_->rank; }
  int size() const override { return context_->size; }

  // The first failure ends the collective on every node: announced in node
  // 0's store, it cuts the other nodes' waits short (FailureWatch), and
  // lost_ranks() names the nodes that did not announce it.
  void all_gather(const void* mine, size_t bytes, void* all) override {
    if (bytes == 0) return;  // (and `mine`, `all` may be null)
    char* out = static_cast<char*>(all);
    std::memcpy(out + static_cast<size_t>(rank()) * bytes, mine, bytes);
    const uint64_t slot = static_cast<uint64_t>(context_->nextSlot());
    // One buffer per peer and direction: a failed pair's error stays on its own buffers.
    std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> send(static_cast<size_t>(size())),
        recv(static_cast<size_t>(size()));
    Failure failure;
    for (int p = 0; p < size(); ++p) {
      if (p == rank()) continue;
      const size_t i = static_cast<size_t>(p);
      recv[i] = context_->createUnboundBuffer(out + i * bytes, bytes);
      send[i] = context_->createUnboundBuffer(const_cast<void*>(mine), bytes);
      failure.attempt(p, [&] { recv[i]->recv(p, slot); });
    }
    for (int p = 0; p < size(); ++p)
      if (p != rank()) failure.attempt(p, [&] { send[static_cast<size_t>(p)]->send(p, slot); });
    for (int p = 0; p < size() && !failure; ++p)
      if (p != rank()) failure.attempt(p, [&] { wait(*recv[static_cast<size_t>(p)], true); });
    for (int p = 0; p < size() && !failure; ++p)
      if (p != rank()) failure.attempt(p, [&] { wait(*send[static_cast<size_t>(p)], false); });
    if (failure) failure.raise(rank(), lost_ranks());
  }

  void broadcast(void* data, size_t bytes, int root) override {
    if (bytes == 0) return;
    const uint64_t slot = static_cast<uint64_t>(context_->nextSlot());
    Failure failure;
    if (rank() == root) {
      std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> send(static_cast<size_t>(size()));
      for (int p = 0; p < size(); ++p)
        if (p != root) {
          send[static_cast<size_t>(p)] = context_->createUnboundBuffer(data, bytes);
          failure.attempt(p, [&] { send[static_cast<size_t>(p)]->send(p, slot); });
        }
      for (int p = 0; p < size(); ++p)
        if (p != root && !failure) failure.attempt(p, [&] { wait(*send[static_cast<size_t>(p)], false); });
    } else {
      auto buf = context_->createUnboundBuffer(data, bytes);
      failure.attempt(root, [&] {
        buf->recv(root, slot);
        wait(*buf, true);
      });
    }
    if (failure) failure.raise(rank(), lost_ranks());
  }

  void barrier() override {
    char mine = 1;
    std::vector<char> all(static_cast<size_t>(size()));
    all_gather(&mine, 1, all.data());
  }

 private:
  // The first failure of Gloo's in a collective (a closed connection, a
  // timeout): the loss of `peer` (-1: one of the peers). The context cannot
  // be used after it.
  class Failure {
   public:
    template <typename F>
    void attempt(int peer, F&& f) {
      try {
        f();
      } catch (const std::exception& e) {
        if (!failed_) {
          failed_ = true;
          peer_ = peer;
          what_ = one_line(e.what());
        }
      }
    }
    explicit operator bool() const { return failed_; }
    [[noreturn]] void raise(int rank, const std::vector<int>& lost) const {
      std::vector<std::string> names;
      for (int r : lost) names.push_back(std::to_string(r));
      std::string who = !lost.empty() ? fmt::format("node{} {}", lost.size() > 1 ? "s" : "", fmt::join(names, ", "))
                        : peer_ >= 0  ? fmt::format("node {}", peer_)
                                      : std::string("a node");
      throw UserError(Code::NODE_004, {}, fmt::format("node {} lost {}: {}", rank, who, what_),
                      "the last complete checkpoint is kept: start every node again with --resume latest");
    }

   private:
    bool failed_ = false;
    int peer_ = -1;
    std::string what_;
  };

  // A wait of a collective; one that another node's failure cut short throws.
  void wait(gloo::transport::UnboundBuffer& buffer, bool recv) {
    if (!watch_->wait(buffer, recv, timeout_)) throw std::runtime_error("another node announced a failure");
  }

  // Which peers are gone, after a failure: a peer's silence may be its own
  // or that of a node it waits for (a node stopped mid-exchange leaves some
  // peers a step behind the others). So every node that fails says so in
  // node 0's store, within the grace, and the lost ones are those that do
  // not; a store that does not answer is node 0 lost.
  std::vector<int> lost_ranks() {
    RendezvousClient& store = *meeting_.store;
    std::vector<char> seen(static_cast<size_t>(size()), 0);
    bool answered = false;
    try {
      store.set_timeout(grace_);
      // Node 0 waits a little longer, so that its store outlives the others' last look.
      const auto deadline = Clock::now() + grace_ + (rank() == 0 ? grace_ / 2 : milliseconds(0));
      store.set(meeting_.prefix + "failed", std::to_string(rank()));  // the other nodes' waits stop
      store.set(meeting_.prefix + "failed/" + std::to_string(rank()), "1");
      answered = true;
      for (int p = 0; p < size(); ++p)
        if (p != rank())
          seen[static_cast<size_t>(p)] =
              store.wait(meeting_.prefix + "failed/" + std::to_string(p), deadline).has_value();
    } catch (const UserError&) {
      // node 0's store stopped answering: node 0 is lost, unless it was seen failing (then it has left)
    }
    std::vector<int> lost;
    if (!answered) {
      if (rank() != 0) lost = {0};  // (node 0's own store is in its process: then Gloo's peer is named)
      return lost;
    }
    for (int p = 0; p < size(); ++p)
      if (p != rank() && !seen[static_cast<size_t>(p)]) lost.push_back(p);
    return lost;
  }

  Meeting meeting_;
  milliseconds grace_;    // for lost_ranks() (node 0's: 1.5 x), out of SEXPGPU_NODE_TIMEOUT
  milliseconds timeout_;  // a collective's, the rest of it
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
  std::unique_ptr<FailureWatch> watch_;
};

}  // namespace

std::unique_ptr<Communicator> connect_gloo(const NodeSetup& setup, Meeting meeting) {
  return std::make_unique<GlooCommunicator>(setup, std::move(meeting));
}

#else

bool have_gloo() { return false; }

std::unique_ptr<Communicator> connect_gloo(const NodeSetup&, Meeting) {
  throw UserError(Code::NODE_001, {}, "this sexpgpu was built without Gloo: it cannot run across several nodes",
                  "rebuild with libgloo-dev installed, or unset SEXPGPU_NODES (or set it to 1)");
}

#endif

}  // namespace sx
