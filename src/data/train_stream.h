#pragma once
// The training stream: a step's records are the next windows in the loader's
// order, wrapping to a new epoch at the end. A background thread keeps the
// next few batches ready; the batches are the same with and without it.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "data/dataset.h"
#include "data/position.h"
#include "data/window_order.h"

namespace sx::data {

struct TrainOptions {
  uint64_t seed = 0;    // the run's seed
  bool shuffle = true;  // the loader's :shuffle, true when omitted for the run's loader
  int64_t batch = 1;    // a step's records: checked against the source (E-DATA-012); the prefetch unit
  int prefetch = 4;     // batches kept ready by the background thread; 0: no thread
  // Polled while waiting (a signal handler sets it): when true, waits end with Cancelled.
  const std::atomic<bool>* stop = nullptr;
};

// Thrown by next_batch after cancel() or when the stop flag is set.
class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("data loading cancelled") {}
};

class TrainStream {
 public:
  TrainStream(std::shared_ptr<const Dataset> data, TrainOptions opts);
  ~TrainStream();
  TrainStream(const TrainStream&) = delete;
  TrainStream& operator=(const TrainStream&) = delete;

  // The next `records` records: tokens_out and targets_out each get records x seq-len ids.
  // Throws Cancelled (the position is then that of the last whole batch).
  void next_batch(int64_t records, int32_t* tokens_out, int32_t* targets_out);
  Position position() const;
  // Continues from a position taken by position(); E-DATA-014 if it was made for other data.
  void restore(const Position& p);
  // From any thread: makes a waiting (or the next) next_batch throw Cancelled promptly.
  void cancel();

  const Dataset& dataset() const { return *data_; }

 private:
  struct Chunk {
    std::vector<int32_t> tokens, targets;
    int64_t records = 0;
  };
  void fill(WindowOrder& order, Cursor& cur, int64_t records, int32_t* tokens, int32_t* targets) const;
  void start();
  void stop();
  void produce();
  bool cancelled() const;

  std::shared_ptr<const Dataset> data_;
  TrainOptions opts_;
  Cursor committed_;                                 // after the last whole next_batch
  Cursor consumer_;                                  // without prefetch: where the next record comes from
  WindowOrder order_;                                // the caller's thread (no prefetch)
  mutable std::unique_ptr<WindowOrder> info_order_;  // position()'s shard and offset

  // Prefetch: the thread fills `queue_` from `producer_`.
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Chunk> queue_;
  Chunk current_;
  int64_t current_used_ = 0;
  Cursor producer_;
  bool stopping_ = false;
  std::exception_ptr error_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace sx::data
