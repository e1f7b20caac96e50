#include "data/train_stream.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "util/error.h"

namespace sx::data {
namespace {

Cursor skip(Cursor c, int64_t records, int64_t windows) {
  int64_t index = c.index + records;
  return {c.epoch + index / windows, index % windows};
}

}  // namespace

TrainStream::TrainStream(std::shared_ptr<const Dataset> data, TrainOptions opts)
    : data_(std::move(data)),
      opts_(opts),
      order_(data_->num_windows(), opts.shuffle, opts.seed, data_->loader()) {
  SX_ASSERT(opts_.batch >= 1, "a training batch needs at least one record");
  data_->require_windows(opts_.batch, fmt::format("the run's :batch of {}", opts_.batch));
  start();
}

TrainStream::~TrainStream() { stop(); }

void TrainStream::fill(WindowOrder& order, Cursor& cur, int64_t records, int32_t* tokens,
                       int32_t* targets) const {
  const int64_t L = data_->seq_len(), W = data_->num_windows();
  for (int64_t r = 0; r < records; ++r) {
    data_->window(order.window(cur), tokens + r * L, targets + r * L);
    cur.advance(W);
  }
}

bool TrainStream::cancelled() const { return cancelled_.load() || (opts_.stop && opts_.stop->load()); }

void TrainStream::start() {
  consumer_ = committed_;
  if (opts_.prefetch <= 0) return;
  std::lock_guard lk(mu_);
  stopping_ = false;
  producer_ = committed_;
  queue_.clear();
  current_ = {};
  current_used_ = 0;
  error_ = nullptr;
  thread_ = std::thread(&TrainStream::produce, this);
}

void TrainStream::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void TrainStream::produce() {
  WindowOrder order(data_->num_windows(), opts_.shuffle, opts_.seed, data_->loader());
  const size_t n = static_cast<size_t>(opts_.batch * data_->seq_len());
  Cursor cur;
  {
    std::lock_guard lk(mu_);
    cur = producer_;
  }
  try {
    for (;;) {
      {
        std::unique_lock lk(mu_);
        cv_.wait(lk, [&] { return stopping_ || queue_.size() < static_cast<size_t>(opts_.prefetch); });
        if (stopping_) return;
      }
      Chunk c{std::vector<int32_t>(n), std::vector<int32_t>(n), opts_.batch};
      fill(order, cur, c.records, c.tokens.data(), c.targets.data());
      {
        std::lock_guard lk(mu_);
        if (stopping_) return;
        queue_.push_back(std::move(c));
      }
      cv_.notify_all();
    }
  } catch (...) {
    std::lock_guard lk(mu_);
    error_ = std::current_exception();
    cv_.notify_all();
  }
}

void TrainStream::next_batch(int64_t records, int32_t* tokens_out, int32_t* targets_out) {
  SX_ASSERT(records >= 0, "a negative number of records");
  if (cancelled()) throw Cancelled();
  const int64_t L = data_->seq_len(), W = data_->num_windows();
  if (opts_.prefetch <= 0) {
    fill(order_, consumer_, records, tokens_out, targets_out);
    committed_ = consumer_;
    return;
  }
  for (int64_t done = 0; done < records;) {
    if (current_used_ == current_.records) {
      std::unique_lock lk(mu_);
      while (queue_.empty()) {
        if (error_) std::rethrow_exception(error_);
        if (cancelled()) throw Cancelled();
        cv_.wait_for(lk, std::chrono::milliseconds(10));
      }
      current_ = std::move(queue_.front());
      queue_.pop_front();
      current_used_ = 0;
      lk.unlock();
      cv_.notify_all();
    }
    int64_t n = std::min(records - done, current_.records - current_used_);
    size_t bytes = sizeof(int32_t) * static_cast<size_t>(n * L);
    std::memcpy(tokens_out + done * L, current_.tokens.data() + current_used_ * L, bytes);
    std::memcpy(targets_out + done * L, current_.targets.data() + current_used_ * L, bytes);
    done += n, current_used_ += n;
  }
  committed_ = skip(committed_, records, W);
}

Position TrainStream::position() const {
  Position p{data_->loader(),
             opts_.seed,
             opts_.shuffle,
             data_->num_windows(),
             committed_.epoch,
             committed_.index,
             "",
             0};
  if (!info_order_)
    info_order_ =
        std::make_unique<WindowOrder>(data_->num_windows(), opts_.shuffle, opts_.seed, data_->loader());
  auto [shard, offset] = data_->locate(info_order_->window(committed_) * data_->seq_len());
  if (shard) p.shard = shard->name, p.offset = offset;
  return p;
}

void TrainStream::restore(const Position& p) {
  std::string why;
  if (p.loader != data_->loader())
    why = fmt::format("it is loader `{}`'s", p.loader);
  else if (p.shuffle != opts_.shuffle)
    why = fmt::format("it has shuffle {}, the loader {}", p.shuffle, opts_.shuffle);
  else if (p.shuffle && p.seed != opts_.seed)
    why = fmt::format("it was shuffled with seed {}, not {}", p.seed, opts_.seed);
  else if (p.windows != data_->num_windows())
    why = fmt::format("it was made for {} windows, the source now has {}", p.windows, data_->num_windows());
  else if (p.epoch < 0 || p.index < 0 || p.index >= p.windows)
    why = fmt::format("epoch {} index {} is out of range", p.epoch, p.index);
  if (!why.empty())
    throw UserError(
        Code::DATA_014, data_->span(),
        fmt::format("cannot continue loader `{}` from the checkpoint's position: {}", data_->loader(), why));
  stop();
  committed_ = {p.epoch, p.index};
  cancelled_ = false;
  start();
}

void TrainStream::cancel() {
  cancelled_ = true;
  { std::lock_guard lk(mu_); }
  cv_.notify_all();
}

}  // namespace sx::data
