// The training session: compile, open the device and the data, then the step
// loop with its passes, curriculum and reports. At a step boundary the order
// is always: the step, its metrics record, the passes due, the curriculum,
// the checkpoint due, the status file (outputs.md).
#include "runtime/session.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>

#include "lang/manifest_json.h"
#include "runtime/compile.h"
#include "runtime/feed.h"
#include "runtime/init_from.h"
#include "runtime/optimizer.h"
#include "runtime/records.h"
#include "runtime/signals.h"
#include "checkpoint/checkpoint.h"
#include "checkpoint/location.h"
#include "checkpoint/resume_state.h"
#include "data/train_stream.h"
#include "runtime/resume.h"
#include "runtime/run_device.h"
#include "runtime/timing.h"
#include "util/printable.h"
#include "util/version.h"

namespace sx {

namespace {

struct Stopped {
  int signal;
};

// A pass's metric names: the model's loss and outputs as eval/<name>.
struct PassResult {
  std::vector<std::pair<std::string, double>> metrics;  // "eval/loss" first
};

std::string hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

// Float32 values widened to double, as every record prints them.
double f32(double x) { return static_cast<double>(static_cast<float>(x)); }

class Session {
 public:
  explicit Session(const RunRequest& req)
      : req_(req), metrics_(req.env.metrics), status_(req.env.status, req.env.status_source), pid_(getpid()),
        location_(req.env.checkpoint_dir) {}

  int run() {
    started_at_ = rfc3339_now();
    write_status("compiling");
    Stopwatch compile_clock;
    try {
      c_ = compile(req_.file, req_.selection, req_.env, StopSignals::flag());
    } catch (const Interrupted&) {
      return stop_before_start(StopSignals::pending());
    } catch (const UserError& e) {
      write_status("failed", false, nullptr, &e);  // refused before the first step: exit 2
      throw;
    }
    x_ = c_.x;
    timings_.graph_s = compile_clock.seconds();
    if (int sig = StopSignals::pending()) return stop_before_start(sig);

    Stopwatch open_clock;
    std::string resume_text = "-";
    try {
      if (location_) location_lock_ = ckpt::claim_location(*location_, x_->slug, req_.env.resume.has_value());
      open_device();
      open_data();
      timings_.device_open_s = open_clock.seconds();
      if (int sig = StopSignals::pending()) return stop_before_start(sig);
      if (req_.env.resume) {
        resume_text = locate_resume();
        if (resume_) load_resume();
      }
    } catch (const UserError& e) {
      // A read cancelled by a stopping signal (an S3 request in flight) is a stop, not a failure.
      if (int sig = StopSignals::pending()) return stop_before_start(sig);
      write_status("failed", false, nullptr, &e);  // refused before the first step: exit 2
      throw;
    }
    print_run_line(resume_text);
    if (resume_) report_resume();

    // (A checkpoint already at the last step trains nothing: the loop runs the
    // passes that were due when it stopped, if any, and ends.)
    int code = 0;
    try {
      metrics_.write(meta_record());
      event("start", step_, {{"pid", pid_}, {"host", hostname()}, {"device", device_name()}});
      if (resume_) event("resume", step_, {{"from", resume_->path}, {"differences", differences_json()}});
      for (const auto& rec : resume_unwritten_) metrics_.write(rec);  // what the stopped run could not write
      write_status("running");
      loop();
    } catch (const Stopped& s) {
      code = finish_stopped(s.signal);
    } catch (const data::Cancelled&) {
      code = finish_stopped(StopSignals::pending());
    } catch (const MetricsWriteError& e) {
      code = finish_metrics_failed(e);
    } catch (const UserError& e) {
      code = finish_failed(e);
    }
    return code;
  }

 private:
  const RunDecl& run_decl() const { return *x_->run; }

  void open_device() {
    dev_ = open_run_device(device_name(), c_, base_dir(), req_.env.threads);
  }

  std::string device_name() const { return std::string(to_string(req_.env.device)); }

  std::string base_dir() const {
    auto dir = std::filesystem::path(req_.file).parent_path().string();
    return dir;
  }

  void open_data() {
    uint64_t seed = static_cast<uint64_t>(run_decl().seed);
    train_feeds_[run_decl().loader->name] = open_train_feed(*run_decl().loader, base_dir(), seed, run_decl().batch);
    for (const auto& st : x_->curriculum)
      if (!train_feeds_.count(st.loader->name))
        train_feeds_[st.loader->name] = open_train_feed(*st.loader, base_dir(), seed, run_decl().batch);
    for (const auto& p : c_.passes)
      pass_feeds_.push_back(open_pass_feed(*p.decl->loader, base_dir(), p.batch, p.decl->batches, p.decl->name));
    enter_stage(0);
  }

  // A stage's loader and lr-scale (each already the previous stage's when the stage sets none).
  void enter_stage(int64_t stage) {
    stage_ = stage;
    if (x_->curriculum.empty()) {
      current_loader_ = run_decl().loader->name;
      return;
    }
    const StageDecl& st = x_->curriculum[static_cast<size_t>(stage)];
    current_loader_ = st.loader->name;
    lr_scale_ = st.lr_scale;
  }

  // ---- the loop -------------------------------------------------------------

  void loop() {
    loop_clock_.emplace();
    const int64_t steps = run_decl().steps;
    if (resume_) run_passes(resume_passes_due_, step_);  // cut short when the run stopped
    else run_passes(passes_due(0), 0);
    for (int64_t k = step_ + 1; k <= steps; ++k) {
      if (int sig = StopSignals::pending()) throw Stopped{sig};
      train_step(k);
      run_passes(passes_due(k), k);
      if (location_ && ((run_decl().checkpoint_every && k % *run_decl().checkpoint_every == 0) || k == steps))
        checkpoint();
      write_status("running", /*throttle=*/true);
    }
    timings_.total_s = loop_clock_->seconds();
    finish_done();
  }

  void train_step(int64_t k) {
    in_flight_ = k;
    Stopwatch clock;
    const RunDecl& r = run_decl();
    const int64_t m = r.microbatches;
    const int64_t seq = r.loader->seq_len;
    StepSums sums = run_microbatches(dev_, c_, *train_feeds_.at(current_loader_), k, tokens_, targets_);
    const std::vector<double>& metric_sums = sums.metrics;
    const std::vector<double>& tap_sums = sums.taps;
    float loss = static_cast<float>(sums.loss / static_cast<double>(m));
    if (auto which = first_nonfinite(*dev_.device, loss)) nonfinite(k, *which);

    double lr = schedule_lr(*r.optimizer->lr, k, r.steps) * lr_scale_;
    StepStats stats = dev_.device->update(k, lr, wants_optimizer_taps());

    step_ = k;
    train_loss_ = loss;
    positions_ = loader_positions();  // a checkpoint of this step resumes from here
    pending_passes_ = passes_due(k);  // and runs these first, until they have run
    in_flight_ = 0;
    records_ += r.batch;
    tokens_count_ += r.batch * (seq + 1);
    double step_s = clock.seconds();
    timings_.step_s.push_back(step_s);

    Json rec = {{"kind", "step"}, {"step", k}, {"train/loss", f32(loss)}, {"lr", f32(lr)}, {"records", records_},
                {"tokens", tokens_count_}, {"stage", stage_}, {"elapsed_s", loop_clock_->seconds()},
                {"step_s", step_s}};
    for (size_t i = 0; i < metric_sums.size(); ++i)
      rec["train/" + c_.train.traced.metrics[i].first] = f32(metric_sums[i] / static_cast<double>(m));
    for (size_t i = 0; i < tap_sums.size(); ++i)
      rec[c_.train.taps[i].metric] = f32(tap_sums[i] / static_cast<double>(m));
    add_optimizer_taps(rec, stats);
    metrics_.write(rec);
  }

  bool optimizer_tap_selected(const char* name) const {
    for (const auto& g : run_decl().diagnostics)
      if (diagnostic_match(g, name)) return true;
    return false;
  }
  bool wants_optimizer_taps() const {
    return optimizer_tap_selected("grad/norm") || optimizer_tap_selected("update/ratio");
  }
  void add_optimizer_taps(Json& rec, const StepStats& stats) const {
    if (optimizer_tap_selected("grad/norm"))
      for (const auto& [path, n] : stats.param_grad_norm) rec["grad/norm/" + path] = f32(n);
    if (optimizer_tap_selected("update/ratio"))
      for (const auto& [path, r] : stats.param_update_ratio) rec["update/ratio/" + path] = f32(r);
  }

  [[noreturn]] void nonfinite(int64_t k, const std::string& which) {
    event("nonfinite", k, {{"value", which}});
    throw UserError(Code::NUM_001, {}, fmt::format("{} is not finite at step {}", which, k),
                    "lower the learning rate, or add :clip to the optimizer");
  }

  // ---- passes and the curriculum -------------------------------------------

  bool due(const PassGraph& p, int64_t k) const {
    int64_t every = x_->every(*p.decl);
    if (k == 0) return every > 0;
    if (k == run_decl().steps) return true;
    return every > 0 && k % every == 0;
  }

  std::vector<std::string> passes_due(int64_t k) const {
    std::vector<std::string> names;
    for (const auto& p : c_.passes)
      if (due(p, k)) names.push_back(p.decl->name);
    return names;
  }

  // Runs the named passes in declaration order. Those not yet run stay in
  // pending_passes_, which a checkpoint written on the way out records.
  void run_passes(const std::vector<std::string>& names, int64_t k) {
    pending_passes_ = names;
    for (size_t i = 0; i < c_.passes.size(); ++i) {
      const std::string& name = c_.passes[i].decl->name;
      if (std::find(names.begin(), names.end(), name) == names.end()) continue;
      if (int sig = StopSignals::pending()) throw Stopped{sig};
      write_status("evaluating");
      PassResult r = run_pass(i);
      report_pass(c_.passes[i], r, k);
      pending_passes_.erase(std::find(pending_passes_.begin(), pending_passes_.end(), name));
    }
    // The curriculum comes after all the passes due at a step (not after the last step's).
    size_t next = static_cast<size_t>(stage_) + 1;
    if (k < run_decl().steps && next < x_->curriculum.size()) {
      const std::string& pass = x_->curriculum[next].pass;
      if (std::find(names.begin(), names.end(), pass) != names.end()) maybe_advance(pass, k);
    }
  }

  PassResult run_pass(size_t i) {
    Stopwatch clock;
    PassGraph& p = c_.passes[i];
    PassFeed& feed = *pass_feeds_[i];
    double loss = 0;
    std::vector<double> sums(p.step.traced.metrics.size(), 0.0);
    int64_t n = feed.batches();
    for (int64_t b = 0; b < n; ++b) {
      if (int sig = StopSignals::pending()) throw Stopped{sig};  // the pass is abandoned, not recorded
      feed.batch(b, tokens_, targets_);
      run_pass_batch(dev_, c_, i, tokens_, targets_, loss, sums);
    }
    // Every batch has the same number of tokens: the mean of batch means is the mean over tokens.
    PassResult r;
    r.metrics.emplace_back("eval/loss", f32(loss / static_cast<double>(n)));
    for (size_t m = 0; m < sums.size(); ++m)
      r.metrics.emplace_back("eval/" + p.step.traced.metrics[m].first, f32(sums[m] / static_cast<double>(n)));
    timings_.pass_s.push_back(clock.seconds());
    return r;
  }

  void report_pass(const PassGraph& p, const PassResult& r, int64_t k) {
    const std::string& name = p.decl->name;
    Json rec = {{"kind", "eval"}, {"pass", name}, {"step", k}};
    for (const auto& [metric, v] : r.metrics) rec[metric] = v;
    rec["records"] = records_;
    rec["elapsed_s"] = loop_clock_->seconds();
    metrics_.write(rec);
    for (const auto& [metric, v] : r.metrics) set_last_eval(name == "eval" ? metric : name + ":" + metric, v);

    std::vector<std::string> parts;
    for (const auto& [metric, v] : r.metrics) parts.push_back(fmt::format("{} {:.5f}", metric, v));
    std::string loss = k == 0 ? "-" : fmt::format("{:.5f}", train_loss_);
    std::string where = fmt::format("step {}/{} loss {}", k, run_decl().steps, loss);
    std::string tail = fmt::format("{} records | {:.1f}s", records_, loop_clock_->seconds());
    if (name == "eval")
      std::cerr << one_line(fmt::format("{} | {} | {}\n", where, fmt::join(parts, " | "), tail));
    else
      std::cerr << one_line(fmt::format("{}: {} | {} | {}\n", name, fmt::join(parts, " | "), where, tail));
    write_status("running");
  }

  void set_last_eval(const std::string& key, double v) {
    for (auto& [k, old] : last_eval_)
      if (k == key) {
        old = v;
        return;
      }
    last_eval_.emplace_back(key, v);
  }

  // After a pass (not the one after the last step): the next stage's :when.
  // The next stage's :when, with the metrics of `pass` (its last values) and `step` bound.
  void maybe_advance(const std::string& pass, int64_t k) {
    size_t next = static_cast<size_t>(stage_) + 1;
    const StageDecl& st = x_->curriculum[next];
    auto env = std::make_shared<Env>(st.env);
    std::string prefix = pass == "eval" ? "" : pass + ":";
    for (const auto& [key, v] : last_eval_)
      if (key.rfind(prefix, 0) == 0 && (pass != "eval" || key.find(':') == std::string::npos))
        env->vars[key.substr(prefix.size())] = floating(v);
    env->vars["step"] = integer(k);
    // Before the first step there is no training loss: NaN, so every comparison with it is false.
    env->vars["train/loss"] = floating(k > 0 ? train_loss_ : std::numeric_limits<double>::quiet_NaN());
    ValueP ok = c_.interp->eval(st.when, env);
    if (!ok->truthy()) return;
    std::string why = describe_condition(*st.when, *env);
    event("stage", k, {{"from", stage_}, {"to", static_cast<int64_t>(next)}, {"name", st.name}, {"condition", why}});
    enter_stage(static_cast<int64_t>(next));
    std::cerr << one_line(fmt::format("stage {} {} at step {} ({})\n", stage_, st.name, k, why));
    write_status("running");
  }

  // "(eval/loss 2.43120 < 2.5)": a comparison with the metrics it read.
  static std::string describe_condition(const Value& when, const Env& env) {
    if (when.kind != Kind::List || when.items.size() != 3 || when.items[0]->kind != Kind::Symbol) return repr(when);
    auto side = [&](const Value& v) {
      if (v.kind == Kind::Symbol)
        if (const ValueP* b = env.find(v.s); b && (*b)->is_number())
          return (*b)->kind == Kind::Float ? fmt::format("{} {:.5f}", v.s, (*b)->f) : fmt::format("{} {}", v.s, (*b)->i);
      return repr(v);
    };
    return fmt::format("{} {} {}", side(*when.items[1]), when.items[0]->s, side(*when.items[2]));
  }

  // ---- checkpoints and resume ----------------------------------------------

  std::string checkpoints_text() const {
    if (!location_) return "-";
    const auto& every = run_decl().checkpoint_every;
    return every ? fmt::format("{} every {}", location_->text, *every) : location_->text;
  }

  Json loader_positions() const {
    Json j = Json::object();
    for (const auto& [name, feed] : train_feeds_) j[name] = feed->position();
    return j;
  }

  // The checkpoint of the last completed step, with the passes still due at it.
  void checkpoint() {
    write_status("checkpointing");
    ckpt::CheckpointData d;
    d.step = step_;
    download_for_checkpoint(*dev_.device, c_.params, d);
    Json eval = Json::object();
    for (const auto& [k, v] : last_eval_) eval[k] = v;
    d.state = {{"step", step_},
               {"counters", {{"records", records_}, {"tokens", tokens_count_}}},
               {"stage", stage_},
               {"loader", current_loader_},
               {"loaders", positions_.is_null() ? loader_positions() : positions_},
               {"rng", {{"generator", "philox4x32-10"}, {"seed", run_decl().seed}, {"dropout_offset", "step << 16 | microbatch"}}},
               {"passes_due", pending_passes_},
               {"train_loss", step_ > 0 ? Json(f32(train_loss_)) : Json(nullptr)},
               {"eval", eval},
               {"threads", req_.env.threads},
               {"knobs", manifest_json(*x_)},
               {"slug", x_->slug},
               {"graph", c_.graph_hash},
               {"optimizer", optimizer_json(*run_decl().optimizer)},
               {"version", SEXPGPU_VERSION},
               {"written_at", rfc3339_now()}};
    // (only after a failed metrics write: the record the resumed run writes first)
    if (const Json& u = metrics_.unwritten(); !u.is_null() && u.value("kind", "") != "meta")
      d.state["unwritten_records"] = Json::array({u});
    ckpt::WriteResult w;
    try {
      w = ckpt::write_checkpoint(*location_, x_->slug, d);
    } catch (const UserError& e) {
      event("checkpoint-failed", step_, {{"code", code_info(e.code()).name}, {"message", e.diagnostics()[0].message}});
      throw;
    }
    if (run_decl().keep) ckpt::keep_newest(*location_, x_->slug, *run_decl().keep);
    last_checkpoint_ = {step_, w.path};
    std::cerr << one_line(fmt::format("checkpoint step-{} -> {} ({:.3f}s)\n", step_, w.path, w.seconds));
    event("checkpoint", step_, {{"path", w.path}, {"bytes", w.bytes}, {"seconds", w.seconds}});
    write_status("running");
  }

  // Finds the checkpoint to resume from; the run line's `resume` field.
  std::string locate_resume() {
    const ResumeFrom& r = *req_.env.resume;
    std::string dir;
    if (r.latest) {
      auto latest = ckpt::find_latest(*location_, x_->slug);
      if (!latest) return "latest=none";
      dir = *latest;
    } else {
      dir = r.location.text;
    }
    resume_.emplace();
    resume_->path = dir;
    resume_->data = ckpt::read_checkpoint(dir);
    resume_->step = resume_->data.step;
    return r.latest ? "latest=" + dir : dir;
  }

  Json differences_json() const {
    Json out = Json::array();
    for (const auto& d : differences_) out.push_back({{"class", d.cls}, {"knob", d.what}, {"from", d.from}, {"to", d.to}});
    return out;
  }

  void report_resume() {
    std::cerr << one_line("resume: from " + resume_->path + "\n");
    for (const auto& d : differences_) std::cerr << one_line(d.line() + "\n");
  }

  // Restores everything a step depends on; refuses what cannot continue.
  void load_resume() {
    const Json& st = resume_->data.state;
    ckpt::ResumeState saved = ckpt::check_resume_state(st, resume_expectations(), resume_->path);
    differences_ = resume_differences(st, *x_, c_.graph_hashes, req_.env.threads);
    std::vector<Diagnostic> refused;
    for (const auto& d : differences_)
      if (d.cls == "refused")
        refused.push_back({Code::CKPT_040, fmt::format("resume from {} refused: {} {} -> {}", resume_->path, d.what,
                                                       d.from, d.to),
                           {}, {}, "resume with the selection the checkpoint was made with, or start a new run"});
    if (!refused.empty()) {
      report_resume();
      throw UserError(refused);
    }
    upload_from_checkpoint(*dev_.device, c_.params, resume_->data, resume_->path);
    step_ = first_step_ = resume_->step;
    timings_.first_step = step_;
    records_ = saved.records;
    tokens_count_ = saved.tokens;
    stage_ = saved.stage;
    current_loader_ = saved.loader;
    for (const auto& [name, position] : saved.positions) train_feeds_.at(name)->restore(position);
    resume_passes_due_ = saved.passes_due;
    resume_unwritten_ = saved.unwritten;
    if (saved.train_loss) train_loss_ = *saved.train_loss;
    for (const auto& [k, v] : saved.eval) set_last_eval(k, v);
    if (stage_ >= 0 && static_cast<size_t>(stage_) < x_->curriculum.size())
      lr_scale_ = x_->curriculum[static_cast<size_t>(stage_)].lr_scale;
    positions_ = loader_positions();
    last_checkpoint_ = {step_, resume_->path};
  }

  ckpt::ResumeExpectations resume_expectations() const {
    ckpt::ResumeExpectations e;
    for (const auto& [name, feed] : train_feeds_) e.loaders.push_back(name);
    for (const auto& p : c_.passes) e.passes.push_back(p.decl->name);
    e.stages = std::max<int64_t>(1, static_cast<int64_t>(x_->curriculum.size()));
    return e;
  }

  // ---- reports ----------------------------------------------------------------

  void print_run_line(const std::string& resume_text) {
    const RunDecl& r = run_decl();
    std::vector<std::string> evals;
    for (const auto& p : c_.passes) evals.push_back(fmt::format("{}@{}", p.decl->name, x_->every(*p.decl)));
    std::string diags = r.diagnostics.empty() ? "-" : fmt::format("{}", fmt::join(r.diagnostics, ","));
    std::cerr << one_line(fmt::format(
        "run: {} slug {} device {} steps {} microbatches {} evals {} diagnostics {} precision {} seed {} "
        "checkpoints {} resume {} status {}\n",
        req_.file, x_->slug, device_name(), r.steps, r.microbatches, evals.empty() ? "-" : fmt::format("{}", fmt::join(evals, ",")),
        diags, r.precision, r.seed, checkpoints_text(), resume_text, status_.enabled() ? status_.path() : "-"));
    if (metrics_.enabled()) std::cerr << one_line("metrics: " + metrics_.line() + "\n");
  }

  Json meta_record() const {
    return {{"kind", "meta"},      {"slug", x_->slug},
            {"file", req_.file},   {"run", run_decl().name},
            {"version", SEXPGPU_VERSION}, {"device", device_name()},
            {"precision", run_decl().precision}, {"seed", run_decl().seed},
            {"knobs", manifest_json(*x_)}, {"graph", c_.graph_hash},
            {"params", c_.param_count()}, {"started_at", started_at_},
            {"resumed_from", resume_ ? Json{{"step", resume_->step}, {"path", resume_->path}} : Json(nullptr)}};
  }

  static Json event_record(const std::string& name, int64_t step, Json fields) {
    Json rec = {{"kind", "event"}, {"event", name}, {"step", step}, {"at", rfc3339_now()}};
    for (auto& [k, v] : fields.items()) rec[k] = v;
    return rec;
  }
  void event(const std::string& name, int64_t step, Json fields) { metrics_.write(event_record(name, step, fields)); }

  // On the way out of a failed or stopped run, a record that cannot be written
  // is reported, not thrown: the run ends as it was ending.
  void record_last(const Json& rec) {
    try {
      metrics_.write(rec);
    } catch (const MetricsWriteError& m) {
      std::cerr << render(m);
    }
  }

  Json eval_json() const {
    Json e = Json::object();
    for (const auto& [k, v] : last_eval_) e[k] = v;
    return e;
  }

  Json summary(const char* state, const UserError* error) const {
    Json s = {{"kind", "summary"}, {"steps", step_}, {"train_loss", step_ > 0 ? Json(f32(train_loss_)) : Json(nullptr)},
              {"eval", eval_json()},
              {"counters", {{"records", records_}, {"tokens", tokens_count_}}},
              {"stage", stage_}, {"metrics", metrics_.describe()},
              {"status", status_.enabled() ? Json(absolute(status_.path())) : Json(nullptr)}};
    if (state) s["state"] = state;
    if (error) s["error"] = error_json(*error);
    return s;
  }

  // {"code": "E-...", "message": ...}: how the summary, the status file and the error event name an error.
  static Json error_json(const UserError& e) {
    return {{"code", code_info(e.code()).name}, {"message", e.diagnostics()[0].message}};
  }

  static std::string absolute(const std::string& p) {
    std::error_code ec;
    auto a = std::filesystem::absolute(p, ec);
    return ec ? p : a.lexically_normal().string();
  }

  void write_status(const char* state, bool throttle = false, const Json* summary_obj = nullptr,
                    const UserError* error = nullptr) {
    if (!status_.enabled()) return;
    if (throttle && status_clock_.seconds() - last_status_s_ < 1.0) return;
    last_status_s_ = status_clock_.seconds();
    double elapsed = loop_clock_ ? loop_clock_->seconds() : 0.0;
    int64_t steps = x_ ? run_decl().steps : 0;
    int64_t done = step_ - first_step_;
    double rate = elapsed > 0 && done > 0 ? static_cast<double>(done) / elapsed : 0.0;
    Json s = {{"kind", "status"}, {"state", state}, {"slug", x_ ? x_->slug : file_stem(req_.file)},
              {"file", req_.file}, {"pid", pid_}, {"device", device_name()}, {"step", step_}, {"steps", steps},
              {"stage", stage_}, {"train_loss", step_ > 0 ? Json(f32(train_loss_)) : Json(nullptr)},
              {"eval", eval_json()}, {"counters", {{"records", records_}, {"tokens", tokens_count_}}},
              {"started_at", started_at_}, {"updated_at", rfc3339_now()},
              {"steps_per_s", rate}, {"eta_s", rate > 0 ? Json(static_cast<double>(steps - step_) / rate) : Json(nullptr)},
              {"checkpoint", last_checkpoint_ ? Json{{"step", last_checkpoint_->first}, {"path", last_checkpoint_->second}}
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

  void print_end_block(const char* word) const {
    std::cerr << one_line(fmt::format("{}: {} {}, train/loss {}\n", word, step_, step_ == 1 ? "step" : "steps",
                                      step_ > 0 ? fmt::format("{:.4f}", train_loss_) : "-"));
    for (const auto& [k, v] : last_eval_) {
      auto colon = k.find(':');
      if (colon == std::string::npos) std::cerr << one_line(fmt::format("  {} {:.4f}\n", k, v));
    }
    for (const auto& [k, v] : last_eval_) {
      auto colon = k.find(':');
      if (colon != std::string::npos)
        std::cerr << one_line(fmt::format("  {}: {} {:.4f}\n", k.substr(0, colon), k.substr(colon + 1), v));
    }
    std::cerr << fmt::format("  counter records {}\n  counter tokens {}\n", records_, tokens_count_);
  }

  // The summary record goes first: when it cannot be written, a completed
  // run ends as failed (with that error alone on stderr), a stopped one as stopped.
  void finish(const char* state, const char* word, const UserError* error) {
    Json s = summary(state, error);
    write_summary(s, /*may_fail=*/state == nullptr);
    std::cerr << timings_.block();
    if (!req_.json) print_end_block(word);
    write_status(state ? state : "done", false, &s, error);
  }

  // The summary ends the metrics; with --json it is also standard output's
  // last line — once, when the metrics already go there.
  void write_summary(const Json& s, bool may_fail) {
    if (may_fail)
      metrics_.write(s);
    else
      record_last(s);
    if (req_.json && metrics_.line() != "stdout") std::cout << json_text(s) << std::endl;
  }

  void finish_done() {
    event("done", step_, Json::object());
    finish(nullptr, "done", nullptr);
  }

  int finish_stopped(int sig) {
    if (location_ && (!last_checkpoint_ || last_checkpoint_->first != step_ || !pending_passes_.empty())) {
      try {
        checkpoint();
      } catch (const UserError& e) {
        return finish_failed(e);
      }
    }
    if (loop_clock_) timings_.total_s = loop_clock_->seconds();
    double took = StopSignals::since_signal();
    try {
      event("signal", step_, {{"name", StopSignals::name(sig)}, {"seconds_to_exit", took}});
      std::cerr << fmt::format("stopping: {} at step {} ({:.2f}s to exit)\n", StopSignals::name(sig), step_, took);
      finish("stopped", "stopped", nullptr);
    } catch (const MetricsWriteError& e) {
      return finish_failed(e);  // the checkpoint is written
    }
    return 128 + sig;
  }

  // A metrics record that cannot be written stops the run, after a checkpoint
  // of the step it belonged to, so that a resume continues the run and the file.
  int finish_metrics_failed(const MetricsWriteError& e) {
    if (location_ && (!last_checkpoint_ || last_checkpoint_->first != step_ || !pending_passes_.empty())) {
      try {
        checkpoint();
      } catch (const UserError& ce) {
        std::cerr << render(ce);
      }
    }
    return finish_failed(e);
  }

  int finish_failed(const UserError& e) {
    if (loop_clock_) timings_.total_s = loop_clock_->seconds();
    std::cerr << render(e);
    int64_t at = in_flight_ ? in_flight_ : step_;
    record_last(event_record("error", at, error_json(e)));
    std::cerr << timings_.block();
    std::cerr << fmt::format("failed: {} at step {}\n", code_info(e.code()).name, at);
    Json s = summary("failed", &e);
    write_summary(s, /*may_fail=*/false);
    write_status("failed", false, &s, &e);
    return 1;
  }

  int stop_before_start(int sig) {
    std::cerr << fmt::format("stopping: {} before the first step ({:.2f}s to exit)\n", StopSignals::name(sig),
                             StopSignals::since_signal());
    Json s = summary("stopped", nullptr);
    write_summary(s, /*may_fail=*/false);
    write_status("stopped", false, &s);
    return 128 + sig;
  }

  const RunRequest& req_;
  MetricsSink metrics_;
  StatusFile status_;
  int64_t pid_;
  std::string started_at_;
  Compiled c_;
  Experiment* x_ = nullptr;
  RunDevice dev_;  // owns the parameters, gradients and optimizer state
  std::map<std::string, std::unique_ptr<TrainFeed>> train_feeds_;
  std::vector<std::unique_ptr<PassFeed>> pass_feeds_;
  std::string current_loader_;
  std::vector<int32_t> tokens_, targets_;

  struct Resume {
    std::string path;
    int64_t step = 0;
    ckpt::CheckpointData data;
  };
  std::optional<Location> location_;
  std::unique_ptr<ckpt::RunLock> location_lock_;  // held from before the first step to the end
  std::optional<Resume> resume_;
  std::vector<ResumeDifference> differences_;
  std::vector<std::string> resume_passes_due_, pending_passes_;
  std::vector<Json> resume_unwritten_;
  std::optional<std::pair<int64_t, std::string>> last_checkpoint_;
  Json positions_;

  int64_t in_flight_ = 0;  // the step being computed, 0 between steps
  int64_t step_ = 0, first_step_ = 0, stage_ = 0, records_ = 0, tokens_count_ = 0;
  float train_loss_ = 0;
  double lr_scale_ = 1.0;
  std::vector<std::pair<std::string, double>> last_eval_;  // "eval/loss", "probe:eval/loss", first seen first
  Timings timings_;
  std::optional<Stopwatch> loop_clock_;  // from the step loop's start (before the step-0 pass)
  Stopwatch status_clock_;
  double last_status_s_ = -1e9;
};

}  // namespace

int run_session(const RunRequest& req) {
  StopSignals::install();
  Session s(req);
  return s.run();
}

}  // namespace sx
