#include "runtime/reporter.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <random>

#include "lang/experiment.h"
#include "lang/manifest_json.h"
#include "lang/selection.h"
#include "runtime/session.h"
#include "util/host_name.h"
#include "util/printable.h"
#include "util/stop_signals.h"
#include "util/version.h"

namespace sx {

namespace {

std::string absolute(const std::string& p) {
  std::error_code ec;
  auto a = std::filesystem::absolute(p, ec);
  return ec ? p : a.lexically_normal().string();
}

// {"code": "E-...", "message": ...}: how the summary, the status file and the error event name an error.
Json error_json(const UserError& e) {
  return {{"code", code_info(e.code()).name}, {"message", e.diagnostics()[0].message}};
}

Json event_record(const std::string& name, int64_t step, Json fields) {
  Json rec = {{"kind", "event"}, {"event", name}, {"step", step}, {"at", rfc3339_now()}};
  for (auto& [k, v] : fields.items()) rec[k] = v;
  return rec;
}

// "20261201T101501.123Z-4242-9f3c2a1b" for a session started at 2026-12-01T10:15:01.123Z by pid 4242.
std::string segment_id(const std::string& started_at, int64_t pid) {
  std::string compact;
  for (char c : started_at)
    if (c != '-' && c != ':') compact += c;
  std::random_device rd;
  return fmt::format("{}-{}-{:08x}", compact, pid, static_cast<uint32_t>(rd()));
}

}  // namespace

Reporter::Reporter(const RunRequest& req, const RunState& state, std::string device, bool leads)
    : req_(req),
      state_(state),
      device_(std::move(device)),
      leads_(leads),
      metrics_(leads ? req.env.metrics : std::nullopt),
      status_(leads ? req.env.status : std::nullopt, req.env.status_source),
      pid_(getpid()),
      started_at_(rfc3339_now()),
      segment_(segment_id(started_at_, pid_)) {}

void Reporter::attach(const Experiment& x) {
  x_ = &x;
  metrics_.attach(x.slug, segment_);
}

int64_t Reporter::steps() const { return x_ ? x_->run->steps : 0; }

// ---- before the first step -------------------------------------------------

void Reporter::refused(const UserError& e) { write_status("failed", false, nullptr, &e); }

void Reporter::run_line(const std::vector<std::string>& evals, const std::string& checkpoints,
                        const std::string& resume) {
  const RunDecl& r = *x_->run;
  std::string diags = r.diagnostics.empty() ? "-" : fmt::format("{}", fmt::join(r.diagnostics, ","));
  // Several GPUs (runtime/device_group.h): their CUDA ordinals in rank order.
  const Environment& env = req_.env;
  std::string gpus = env.device == Device::cuda && env.devices.size() > 1
                         ? fmt::format(" devices {}", fmt::join(env.devices, ","))
                         : "";
  std::cerr << one_line(
      fmt::format("run: {} slug {} device {} steps {} microbatches {} evals {} diagnostics {} precision {} seed {} "
                  "checkpoints {} resume {} status {}{}{}\n",
                  req_.shown_file(), x_->slug, device_, r.steps, r.microbatches,
                  evals.empty() ? "-" : fmt::format("{}", fmt::join(evals, ",")), diags, r.precision, r.seed,
                  checkpoints, resume, status_.enabled() ? status_.path() : "-", node_, gpus));
  if (metrics_.enabled()) std::cerr << one_line("metrics: " + metrics_.line() + "\n");
}

void Reporter::resume_lines(const std::string& path, const std::vector<ResumeDifference>& differences) {
  std::cerr << one_line("resume: from " + path + "\n");
  for (const auto& d : differences) std::cerr << one_line(d.line() + "\n");
}

void Reporter::started(const std::string& graph_hash, int64_t params, const std::optional<CheckpointRef>& resumed_from,
                       const std::vector<ResumeDifference>& differences) {
  metrics_.write({{"kind", "meta"},
                  {"slug", x_->slug},
                  {"file", req_.shown_file()},
                  {"run", x_->run->name},
                  {"version", SEXPGPU_VERSION},
                  {"device", device_},
                  {"precision", x_->run->precision},
                  {"seed", x_->run->seed},
                  {"knobs", manifest_json(*x_)},
                  {"graph", graph_hash},
                  {"params", params},
                  {"started_at", started_at_},
                  {"segment", segment_},
                  {"resumed_from",
                   resumed_from ? Json{{"step", resumed_from->step}, {"path", resumed_from->path}} : Json(nullptr)}});
  event("start", state_.step, {{"pid", pid_}, {"host", host_name()}, {"device", device_}});
  if (resumed_from) {
    Json out = Json::array();
    for (const auto& d : differences)
      out.push_back({{"class", d.cls}, {"knob", d.what}, {"from", d.from}, {"to", d.to}});
    event("resume", state_.step, {{"from", resumed_from->path}, {"differences", out}});
  }
}

// ---- during the loop ---------------------------------------------------------

void Reporter::event(const std::string& name, int64_t step, Json fields) {
  metrics_.write(event_record(name, step, fields));
}

void Reporter::eval_record(const std::string& pass, int64_t step,
                           const std::vector<std::pair<std::string, double>>& metrics) {
  Json rec = {{"kind", "eval"}, {"pass", pass}, {"step", step}};
  for (const auto& [metric, v] : metrics) rec[metric] = v;
  rec["records"] = state_.records;
  rec["elapsed_s"] = state_.elapsed_s();
  metrics_.write(rec);
}

void Reporter::eval_line(const std::string& pass, int64_t step,
                         const std::vector<std::pair<std::string, double>>& metrics) {
  std::vector<std::string> parts;
  for (const auto& [metric, v] : metrics) parts.push_back(fmt::format("{} {:.5f}", metric, v));
  std::string loss = step == 0 ? "-" : fmt::format("{:.5f}", state_.train_loss);
  std::string where = fmt::format("step {}/{} loss {}", step, steps(), loss);
  std::string tail = fmt::format("{} records | {:.1f}s", state_.records, state_.elapsed_s());
  if (!leads_) return;
  if (pass == "eval")
    std::cerr << one_line(fmt::format("{} | {} | {}\n", where, fmt::join(parts, " | "), tail));
  else
    std::cerr << one_line(fmt::format("{}: {} | {} | {}\n", pass, fmt::join(parts, " | "), where, tail));
  status("running");
}

void Reporter::stage_line(int64_t stage, const std::string& name, int64_t step, const std::string& why) {
  if (!leads_) return;
  std::cerr << one_line(fmt::format("stage {} {} at step {} ({})\n", stage, name, step, why));
  status("running");
}

void Reporter::checkpoint_failed(int64_t step, const UserError& e) {
  event("checkpoint-failed", step, {{"code", code_info(e.code()).name}, {"message", e.diagnostics()[0].message}});
}

void Reporter::checkpoint_written(int64_t step, const ckpt::WriteResult& w) {
  std::cerr << one_line(fmt::format("checkpoint step-{} -> {} ({:.3f}s)\n", step, w.path, w.seconds));
  event("checkpoint", step, {{"path", w.path}, {"bytes", w.bytes}, {"seconds", w.seconds}});
  status("running");
}

// ---- the status file ---------------------------------------------------------

void Reporter::status(const char* state, bool throttle) { write_status(state, throttle, nullptr, nullptr); }

void Reporter::write_status(const char* state, bool throttle, const Json* summary_obj, const UserError* error) {
  if (!status_.enabled()) return;
  if (throttle && status_clock_.seconds() - last_status_s_ < 1.0) return;
  last_status_s_ = status_clock_.seconds();
  const RunState& st = state_;
  double elapsed = st.elapsed_s();
  int64_t total = steps();
  int64_t done = st.step - st.first_step;
  double rate = elapsed > 0 && done > 0 ? static_cast<double>(done) / elapsed : 0.0;
  Json s = {
      {"kind", "status"},
      {"state", state},
      {"slug", x_ ? x_->slug : file_stem(req_.shown_file())},
      {"file", req_.shown_file()},
      {"pid", pid_},
      {"device", device_},
      {"step", st.step},
      {"steps", total},
      {"stage", st.stage},
      {"train_loss", st.train_loss_json()},
      {"eval", st.eval_json()},
      {"counters", st.counters_json()},
      {"started_at", started_at_},
      {"updated_at", rfc3339_now()},
      {"steps_per_s", rate},
      {"eta_s", rate > 0 ? Json(static_cast<double>(total - st.step) / rate) : Json(nullptr)},
      {"checkpoint", st.last_checkpoint ? Json{{"step", st.last_checkpoint->step}, {"path", st.last_checkpoint->path}}
                                        : Json(nullptr)},
      {"knobs", x_ ? manifest_json(*x_) : Json::array()},
      {"summary", summary_obj ? *summary_obj : Json(nullptr)}};
  if (error) s["error"] = error_json(*error);
  if (summary_obj || error) return status_.write(s, &s);  // the end: a second signal leaves it as it is
  // What a second signal, which exits at once, leaves: this, stopped.
  Json killed = s;
  killed["state"] = "stopped";
  killed["summary"] = summary("stopped", nullptr);
  status_.write(s, &killed);
}

// ---- the end -------------------------------------------------------------------

Json Reporter::summary(const char* state, const UserError* error) const {
  Json s = {{"kind", "summary"},
            {"steps", state_.step},
            {"train_loss", state_.train_loss_json()},
            {"eval", state_.eval_json()},
            {"counters", state_.counters_json()},
            {"stage", state_.stage},
            {"metrics", metrics_.describe()},
            {"status", status_.enabled() ? Json(absolute(status_.path())) : Json(nullptr)}};
  if (state) s["state"] = state;
  if (error) s["error"] = error_json(*error);
  return s;
}

// On the way out of a failed or stopped run, a record that cannot be written
// is reported, not thrown: the run ends as it was ending.
void Reporter::record_last(const Json& rec) {
  try {
    metrics_.write(rec);
  } catch (const MetricsWriteError& m) {
    std::cerr << render(m);
  }
}

// The summary ends the metrics; with --json it is also standard output's
// last line — once, when the metrics already go there.
void Reporter::write_summary(const Json& s, bool may_fail) {
  if (may_fail)
    metrics_.write(s);
  else
    record_last(s);
  if (req_.json && leads_ && metrics_.line() != "stdout") std::cout << json_text(s) << std::endl;
}

void Reporter::end_block(const char* word) const {
  const RunState& st = state_;
  std::cerr << one_line(fmt::format("{}: {} {}, train/loss {}\n", word, st.step, st.step == 1 ? "step" : "steps",
                                    st.step > 0 ? fmt::format("{:.4f}", st.train_loss) : "-"));
  for (const auto& [k, v] : st.last_eval) {
    auto colon = k.find(':');
    if (colon == std::string::npos) std::cerr << one_line(fmt::format("  {} {:.4f}\n", k, v));
  }
  for (const auto& [k, v] : st.last_eval) {
    auto colon = k.find(':');
    if (colon != std::string::npos)
      std::cerr << one_line(fmt::format("  {}: {} {:.4f}\n", k.substr(0, colon), k.substr(colon + 1), v));
  }
  std::cerr << fmt::format("  counter records {}\n  counter tokens {}\n", st.records, st.tokens);
}

// The summary record goes first: when it cannot be written, a completed
// run ends as failed (with that error alone on stderr), a stopped one as stopped.
void Reporter::finish(const char* state, const char* word, const UserError* error, const Timings& timings) {
  Json s = summary(state, error);
  write_summary(s, /*may_fail=*/state == nullptr);
  if (leads_) std::cerr << timings.block();
  if (!req_.json && leads_) end_block(word);
  write_status(state ? state : "done", false, &s, error);
}

void Reporter::done(const Timings& timings) {
  event("done", state_.step, Json::object());
  finish(nullptr, "done", nullptr, timings);
}

void Reporter::stopping(int sig, double seconds_to_exit) {
  event("signal", state_.step, {{"name", StopSignals::name(sig)}, {"seconds_to_exit", seconds_to_exit}});
  std::cerr << fmt::format("stopping: {} at step {} ({:.2f}s to exit)\n", StopSignals::name(sig), state_.step,
                           seconds_to_exit);
}

void Reporter::stopped(const Timings& timings) { finish("stopped", "stopped", nullptr, timings); }

void Reporter::failed(const UserError& e, int64_t at, const Timings& timings) {
  std::cerr << render(e);
  record_last(event_record("error", at, error_json(e)));
  std::cerr << timings.block();
  std::cerr << fmt::format("failed: {} at step {}\n", code_info(e.code()).name, at);
  Json s = summary("failed", &e);
  write_summary(s, /*may_fail=*/false);
  write_status("failed", false, &s, &e);
}

void Reporter::stopped_before_start(int sig, double seconds_to_exit) {
  std::cerr << fmt::format("stopping: {} before the first step ({:.2f}s to exit)\n", StopSignals::name(sig),
                           seconds_to_exit);
  Json s = summary("stopped", nullptr);
  write_summary(s, /*may_fail=*/false);
  write_status("stopped", false, &s, nullptr);
}

void Reporter::error_line(const UserError& e) { std::cerr << render(e); }

}  // namespace sx
