#include "runtime/inprocess_communicator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>

#include "util/error.h"

namespace sx {

namespace {

using Clock = std::chrono::steady_clock;

// One collective at a time: every rank puts its source here, waits until all
// have, reads what it needs, and waits until all have read (a rank's source
// is its caller's buffer, which it may change once it returns); the last to
// finish reading opens the next.
struct Meeting {
  explicit Meeting(int n, double timeout_s)
      : ranks(n), timeout(std::chrono::duration<double>(timeout_s)), sources(n), arrived(n), done(n) {}
  const int ranks;
  const std::chrono::duration<double> timeout;
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<const void*> sources;
  std::vector<bool> arrived, done;
  int arrivals = 0, readers_done = 0;
  bool gathered = false;    // every rank has arrived; it stays so until every rank has read
  uint64_t generation = 0;  // collectives completed
  size_t bytes = 0;
  std::exception_ptr failure;
};

std::string ranks_text(const std::vector<int>& ranks) {
  return fmt::format("GPU rank{} {}", ranks.size() == 1 ? "" : "s", fmt::join(ranks, ", "));
}

class InProcessCommunicator final : public Communicator {
 public:
  InProcessCommunicator(std::shared_ptr<Meeting> m, int rank) : m_(std::move(m)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return m_->ranks; }

  void all_gather(const void* mine, size_t bytes, void* all) override {
    meet(mine, bytes, [&](const std::vector<const void*>& from) {
      for (size_t r = 0; r < from.size(); ++r)
        if (bytes) std::memcpy(static_cast<char*>(all) + r * bytes, from[r], bytes);
    });
  }
  void broadcast(void* data, size_t bytes, int root) override {
    meet(rank_ == root ? data : nullptr, bytes, [&](const std::vector<const void*>& from) {
      if (rank_ != root && bytes) std::memcpy(data, from[static_cast<size_t>(root)], bytes);
    });
  }
  void barrier() override {
    meet(nullptr, 0, [](const std::vector<const void*>&) {});
  }

  void abandon(std::exception_ptr why) override {
    std::lock_guard<std::mutex> l(m_->mutex);
    if (!m_->failure) m_->failure = why;
    m_->changed.notify_all();
  }

 private:
  // Waits until `ready`, or throws the group's failure, or (at the deadline)
  // makes the failure E-NODE-011 naming the ranks `missing` answers.
  void wait(std::unique_lock<std::mutex>& l, Clock::time_point deadline, const std::function<bool()>& ready,
            const std::function<std::vector<int>()>& missing, const char* what) {
    Meeting& m = *m_;
    while (!m.failure && !ready()) {
      if (m.changed.wait_until(l, deadline) == std::cv_status::timeout && !m.failure && !ready()) {
        m.failure = std::make_exception_ptr(UserError(
            Code::NODE_011, {},
            fmt::format("{} did not {} within SEXPGPU_NODE_TIMEOUT ({} s)", ranks_text(missing()), what,
                        std::chrono::duration<double>(m.timeout).count()),
            "the last complete checkpoint is kept: run again with --resume latest; raise SEXPGPU_NODE_TIMEOUT if a "
            "rank is only slow"));
        m.changed.notify_all();
      }
    }
    if (m.failure) std::rethrow_exception(m.failure);
  }

  void meet(const void* mine, size_t bytes, const std::function<void(const std::vector<const void*>&)>& read) {
    Meeting& m = *m_;
    const size_t me = static_cast<size_t>(rank_);
    std::unique_lock<std::mutex> l(m.mutex);
    const Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(m.timeout);
    auto unread = [&m] {
      std::vector<int> r;
      for (int i = 0; i < m.ranks; ++i)
        if (m.arrived[static_cast<size_t>(i)] && !m.done[static_cast<size_t>(i)]) r.push_back(i);
      return r;
    };
    auto absent = [&m] {
      std::vector<int> r;
      for (int i = 0; i < m.ranks; ++i)
        if (!m.arrived[static_cast<size_t>(i)]) r.push_back(i);
      return r;
    };
    wait(
        l, deadline, [&m] { return !m.gathered; }, unread, "finish the previous collective");
    SX_ASSERT(!m.arrived[me], "a rank joined one collective twice");
    if (m.arrivals == 0) m.bytes = bytes;
    SX_ASSERT(m.bytes == bytes, "the ranks of one collective gave different sizes");
    m.sources[me] = mine;
    m.arrived[me] = true;
    if (++m.arrivals == m.ranks) {
      m.gathered = true;
      m.changed.notify_all();
    }
    wait(
        l, deadline, [&m] { return m.gathered; }, absent, "join the collective");
    const uint64_t generation = m.generation;
    l.unlock();
    read(m.sources);
    l.lock();
    m.done[me] = true;
    if (++m.readers_done == m.ranks) {
      m.arrivals = m.readers_done = 0;
      m.gathered = false;
      ++m.generation;
      std::fill(m.arrived.begin(), m.arrived.end(), false);
      std::fill(m.done.begin(), m.done.end(), false);
      m.changed.notify_all();
      return;
    }
    // Every source stays valid until every rank has read: no rank leaves before.
    wait(
        l, deadline, [&] { return m.generation != generation; }, unread, "finish the collective");
  }

  std::shared_ptr<Meeting> m_;
  int rank_;
};

}  // namespace

std::vector<std::unique_ptr<Communicator>> make_inprocess_communicators(int ranks, double timeout_s) {
  SX_ASSERT(ranks >= 1, "an in-process group of no rank");
  auto m = std::make_shared<Meeting>(ranks, timeout_s);
  std::vector<std::unique_ptr<Communicator>> comms;
  for (int r = 0; r < ranks; ++r) comms.push_back(std::make_unique<InProcessCommunicator>(m, r));
  return comms;
}

}  // namespace sx
