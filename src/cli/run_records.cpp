#include "cli/run_records.h"

#include <algorithm>

namespace sx::records {

std::optional<double> number(const Json& record, const std::string& key) {
  auto it = record.find(key);
  if (it == record.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string text(const Json& record, const std::string& key) {
  auto it = record.find(key);
  return it != record.end() && it->is_string() ? it->get<std::string>() : "";
}

History read_history(std::istream& in) {
  History h;
  std::string line;
  while (std::getline(in, line)) {
    Json r = Json::parse(line, nullptr, false);
    if (r.is_discarded() || !r.is_object() || !r.contains("kind") || !r["kind"].is_string()) continue;
    ++h.records;
    const std::string kind = r["kind"].get<std::string>();
    if (kind == "meta") {
      Segment s;
      s.meta = r;
      if (r.contains("resumed_from") && r["resumed_from"].is_object())
        if (auto step = number(r["resumed_from"], "step")) s.resumed_from = static_cast<int64_t>(*step);
      h.segments.push_back(std::move(s));
      h.ended.clear();
      continue;
    }
    if (h.segments.empty()) h.segments.emplace_back();  // records of a file whose meta line was lost
    if (auto e = number(r, "elapsed_s")) h.segments.back().elapsed_s = std::max(h.segments.back().elapsed_s, *e);
    if (kind == "summary") {
      h.summary = r;
      h.ended = text(r, "state").empty() ? "done" : text(r, "state");
      continue;
    }
    if (!r.contains("step") || !r["step"].is_number_integer()) continue;
    const int64_t step = r["step"].get<int64_t>();
    if (kind == "step") {
      h.steps[step] = r;
      Segment& seg = h.segments.back();
      if (seg.first_step == 0) seg.first_step = step;
      seg.last_step = step;
    } else if (kind == "eval") {
      if (std::string pass = text(r, "pass"); !pass.empty()) h.evals[pass][step] = r;
    } else if (kind == "event") {
      std::string event = text(r, "event");
      if (!event.empty()) h.events[{event, step}] = r;
      if (event == "error") h.ended = "failed";
      if (event == "signal") h.ended = "stopped";
    }
  }
  return h;
}

}  // namespace sx::records
