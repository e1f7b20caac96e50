#pragma once
// What `sexpgpu watch` shows of a run, read from its status file or its jsonl
// metrics (docs/watch.md), and how it is drawn: pure functions, so the view
// is tested without a terminal.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace sx::watch {

struct View {
  std::string slug, state, device;  // state: compiling, running, ..., done, stopped, failed
  int64_t step = 0, steps = 0;
  std::optional<double> train_loss;
  std::map<std::string, double> evals;  // eval/loss, probe:eval/loss ...
  std::vector<double> losses;           // train/loss by step, for the sparkline
  std::optional<double> tokens_per_s, eta_s;
  std::string updated_at;
  std::string error;  // a failed run's code and message
  bool ended() const { return state == "done" || state == "stopped" || state == "failed"; }
};

// A status file's object. `history` is the losses seen by earlier polls.
View from_status(const nlohmann::json& status, std::vector<double> history);
// A jsonl file's lines, the latest segment's record winning per step (outputs.md).
View from_jsonl(const std::string& text);

// The losses as a sparkline of at most `width` cells (the most recent ones).
std::string sparkline(const std::vector<double>& values, size_t width);
// The view as lines for a terminal `width` columns wide; every text from the
// files is made printable (no input moves the cursor or forges a line).
std::vector<std::string> render(const View& v, size_t width);

}  // namespace sx::watch
