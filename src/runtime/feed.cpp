#include "runtime/feed.h"

#include "data/dataset.h"
#include "data/eval_stream.h"
#include "data/train_stream.h"
#include "util/stop_signals.h"

namespace sx {

namespace {

class DataTrainFeed : public TrainFeed {
 public:
  DataTrainFeed(std::shared_ptr<const data::Dataset> d, data::TrainOptions o) : stream_(std::move(d), o) {}
  void next(int64_t records, std::vector<int32_t>& tokens, std::vector<int32_t>& targets) override {
    size_t n = static_cast<size_t>(records * stream_.dataset().seq_len());
    tokens.resize(n);
    targets.resize(n);
    stream_.next_batch(records, tokens.data(), targets.data());
  }
  nlohmann::ordered_json position() const override { return data::position_to_json(stream_.position()); }
  void restore(const nlohmann::ordered_json& p) override { stream_.restore(data::position_from_json(p)); }
  void cancel() override { stream_.cancel(); }

 private:
  data::TrainStream stream_;
};

class DataPassFeed : public PassFeed {
 public:
  DataPassFeed(std::shared_ptr<const data::Dataset> d, int64_t batch, std::optional<int64_t> batches,
               const std::string& pass)
      : stream_(std::move(d), batch, batches, pass) {}
  int64_t batches() const override { return stream_.batches(); }
  void batch(int64_t i, std::vector<int32_t>& tokens, std::vector<int32_t>& targets) override {
    size_t n = static_cast<size_t>(stream_.batch() * stream_.dataset().seq_len());
    tokens.resize(n);
    targets.resize(n);
    stream_.get(i, tokens.data(), targets.data());
  }

 private:
  data::EvalStream stream_;
};

// Each loader's data is read once, however many feeds use it.
std::shared_ptr<const data::Dataset> dataset_of(const LoaderDecl& l, const std::string& base_dir) {
  static std::map<const LoaderDecl*, std::shared_ptr<const data::Dataset>> cache;
  auto& d = cache[&l];
  if (!d) d = data::Dataset::load(l, base_dir, StopSignals::flag());
  return d;
}

}  // namespace

std::unique_ptr<TrainFeed> open_train_feed(const LoaderDecl& l, const std::string& base_dir, uint64_t seed,
                                           int64_t batch, bool stop_on_signal) {
  data::TrainOptions o;
  o.seed = seed;
  o.shuffle = l.shuffle.value_or(true);
  o.batch = batch;
  if (stop_on_signal) o.stop = StopSignals::flag();  // a stopping signal cuts a wait for data short
  return std::make_unique<DataTrainFeed>(dataset_of(l, base_dir), o);
}

std::unique_ptr<PassFeed> open_pass_feed(const LoaderDecl& l, const std::string& base_dir, int64_t batch,
                                         std::optional<int64_t> batches, const std::string& pass_name) {
  return std::make_unique<DataPassFeed>(dataset_of(l, base_dir), batch, batches, pass_name);
}

}  // namespace sx
