#include "data/eval_stream.h"

#include "util/error.h"

namespace sx::data {

EvalStream::EvalStream(std::shared_ptr<const Dataset> data, int64_t batch, std::optional<int64_t> batches,
                       const std::string& pass)
    : data_(std::move(data)), batch_(batch) {
  SX_ASSERT(batch >= 1 && (!batches || *batches >= 1), "a pass needs at least one batch of one record");
  if (batches) {
    data_->require_windows(*batches * batch,
                           fmt::format("pass `{}` ({} batches of {})", pass, *batches, batch));
    batches_ = *batches;
  } else {
    data_->require_windows(batch, fmt::format("pass `{}` (a batch of {})", pass, batch));
    batches_ = data_->num_windows() / batch;
  }
}

void EvalStream::get(int64_t i, int32_t* tokens_out, int32_t* targets_out) const {
  SX_ASSERT(i >= 0 && i < batches_, "evaluation batch out of range");
  const int64_t L = data_->seq_len();
  for (int64_t r = 0; r < batch_; ++r) data_->window(i * batch_ + r, tokens_out + r * L, targets_out + r * L);
}

}  // namespace sx::data
