#pragma once
// The runtime's view of the data stage: batches of records for training steps
// and for evaluation passes, as token/target arrays of rows × seq-len.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lang/experiment.h"

namespace sx {

class TrainFeed {
 public:
  virtual ~TrainFeed() = default;
  // The next `records` records (rows), in the loader's order.
  virtual void next(int64_t records, std::vector<int32_t>& tokens, std::vector<int32_t>& targets) = 0;
  virtual nlohmann::ordered_json position() const = 0;  // for checkpoints
  virtual void restore(const nlohmann::ordered_json& position) = 0;
  virtual void cancel() = 0;  // cuts a wait short (a stopping signal)
  // Switching loaders (the curriculum) keeps each loader's own position.
};

class PassFeed {
 public:
  virtual ~PassFeed() = default;
  virtual int64_t batches() const = 0;  // :batches, or every batch of the source
  // Batch i of the pass, from the loader's first window.
  virtual void batch(int64_t i, std::vector<int32_t>& tokens, std::vector<int32_t>& targets) = 0;
};

// `base_dir` is the experiment file's folder: sources are relative to it.
// Every data problem is an E-DATA error here, before the first step.
// `stop_on_signal`: a stopping signal cuts a wait for data short (not on
// several nodes, which stop together at a step's exchange).
std::unique_ptr<TrainFeed> open_train_feed(const LoaderDecl& l, const std::string& base_dir, uint64_t seed,
                                           int64_t batch, bool stop_on_signal = true);
std::unique_ptr<PassFeed> open_pass_feed(const LoaderDecl& l, const std::string& base_dir, int64_t batch,
                                         std::optional<int64_t> batches, const std::string& pass_name);

}  // namespace sx
