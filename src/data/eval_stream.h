#pragma once
// An evaluation pass's stream: the loader's windows in order from window 0 at
// every pass (:shuffle is ignored); batch i is windows [i*batch, (i+1)*batch).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "data/dataset.h"

namespace sx::data {

class EvalStream {
 public:
  // `batches` omitted: the whole source, floor(windows / batch) batches (the
  // windows after the last whole batch are left out). E-DATA-012 when the
  // source has fewer than batches x batch windows, or fewer than one batch.
  EvalStream(std::shared_ptr<const Dataset> data, int64_t batch, std::optional<int64_t> batches,
             const std::string& pass);
  int64_t batches() const { return batches_; }
  int64_t batch() const { return batch_; }
  // Batch i of a pass: tokens_out and targets_out each get batch x seq-len ids.
  void get(int64_t i, int32_t* tokens_out, int32_t* targets_out) const;
  const Dataset& dataset() const { return *data_; }

 private:
  std::shared_ptr<const Dataset> data_;
  int64_t batch_, batches_;
};

}  // namespace sx::data
