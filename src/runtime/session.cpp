// The training session, read top to bottom as its steps: compile, open the
// device and the data, resume, then the step loop: next batch, step, record,
// passes, curriculum, checkpoint. At a step boundary the order is always: the
// step, its metrics record, the passes due, the curriculum, the checkpoint
// due, the status file (outputs.md). The run's state is run_state.h, its
// checkpoints run_checkpoints.h, and everything it tells the user goes
// through the Reporter (reporter.h).
#include "runtime/session.h"

#include <cmath>
#include <filesystem>

#include "checkpoint/resume_state.h"
#include "data/train_stream.h"
#include "driver/compile.h"
#include "lang/manifest_json.h"
#include "runtime/communicator.h"
#include "runtime/curriculum.h"
#include "runtime/device_group.h"
#include "runtime/feed.h"
#include "runtime/init_from.h"
#include "runtime/node_meeting.h"
#include "runtime/node_resume.h"
#include "runtime/node_step.h"
#include "runtime/optimizer.h"
#include "runtime/reporter.h"
#include "runtime/resume.h"
#include "runtime/run_checkpoints.h"
#include "runtime/run_device.h"
#include "runtime/run_state.h"
#include "util/stop_signals.h"

namespace sx {

namespace {

struct Stopped {
  int signal;
};

// A pass's metrics: the model's loss and outputs as eval/<name>, "eval/loss" first.
using PassResult = std::vector<std::pair<std::string, double>>;

class Session {
 public:
  explicit Session(const RunRequest& req)
      : req_(req),
        comm_(make_local_communicator()),
        report_(req, state_, device_name_, req.env.node_rank == 0),
        checkpoints_(req.env.checkpoint_dir) {}

  int run() {
    report_.status("compiling");
    Stopwatch compile_clock;
    try {
      CompileOptions options = compile_options(req_.env, StopSignals::flag());
      options.display = req_.display;
      c_ = compile(req_.file, req_.selection, options);
    } catch (const Interrupted&) {
      return stop_before_start(StopSignals::pending());
    } catch (const UserError& e) {
      report_.refused(e);  // refused before the first step: exit 2
      throw;
    }
    x_ = c_.x;
    report_.attach(*x_);
    timings_.graph_s = compile_clock.seconds();
    if (int sig = StopSignals::pending()) return stop_before_start(sig);

    Stopwatch open_clock;
    std::string resume_text = "-";
    try {
      if (req_.env.nodes > 1) meet_the_nodes();
      // Only the leading rank writes checkpoints, so only it claims their location.
      if (checkpoints_.enabled() && comm_->leads()) checkpoints_.claim(x_->slug, req_.env.resume.has_value());
      open_device();
      open_data();
      timings_.device_open_s = open_clock.seconds();
      if (int sig = local_stop()) return stop_before_start(sig);
      if (req_.env.resume) {
        resume_text = comm_->size() > 1 ? share_resume(*comm_, checkpoints_, *req_.env.resume)
                                        : checkpoints_.locate(*req_.env.resume);
        if (resuming()) load_resume();
      }
      checkpoints_.renew_lock();  // opening the data and the resume may take long
    } catch (const UserError& e) {
      // A read cancelled by a stopping signal (an S3 request in flight) is a stop, not a failure.
      if (int sig = StopSignals::pending()) return stop_before_start(sig);
      report_.refused(e);  // refused before the first step: exit 2
      throw;
    }
    report_.run_line(eval_schedule(), checkpoints_.text(run_decl().checkpoint_every), resume_text);
    report_gpu(dev_, c_, req_.env.explain_kernels, timings_);  // the lowering report, on the cuda device
    if (resuming()) report_.resume_lines(resume_point().path, differences_);

    // (A checkpoint already at the last step trains nothing: the loop runs the
    // passes that were due when it stopped, if any, and ends.)
    int code = 0;
    try {
      std::optional<CheckpointRef> from;
      if (resuming()) from = CheckpointRef{resume_point().step, resume_point().path};
      report_.started(c_.graph_hash, c_.param_count(), from, differences_);
      for (const auto& rec : resume_unwritten_) report_.record(rec);  // what the stopped run could not write
      report_.status("running");
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
  bool resuming() const { return checkpoints_.resume().has_value(); }
  const ResumePoint& resume_point() const { return *checkpoints_.resume(); }

  // A stopping signal, where this process may stop alone: on several nodes
  // only the step's exchange stops them, all at the same step (node_step.h).
  int local_stop() const { return comm_->size() == 1 ? StopSignals::pending() : 0; }

  // Several nodes: the handshake at the rendezvous, then Gloo's mesh (E-NODE-002/003 refuse).
  void meet_the_nodes() {
    comm_ = meet_nodes(node_setup(req_.env), node_hello(*x_, c_.graph_hash, req_.env));
    report_.set_node(comm_->rank(), comm_->size());
  }

  void open_device() {
    group_ = open_devices(device_name_, c_, base_dir(), req_.env, dev_, *comm_);
    if (comm_->size() > 1)
      open_node_exchange(exchange_, *comm_, group_ && group_->spans_nodes(), *dev_.device, req_.env);
  }

  std::string base_dir() const { return std::filesystem::path(req_.file).parent_path().string(); }

  void open_data() {
    uint64_t seed = static_cast<uint64_t>(run_decl().seed);
    const bool alone = comm_->size() == 1;
    train_feeds_[run_decl().loader->name] =
        open_train_feed(*run_decl().loader, base_dir(), seed, run_decl().batch, alone);
    for (const auto& st : x_->curriculum)
      if (!train_feeds_.count(st.loader->name))
        train_feeds_[st.loader->name] = open_train_feed(*st.loader, base_dir(), seed, run_decl().batch, alone);
    for (const auto& p : c_.passes)
      pass_feeds_.push_back(open_pass_feed(*p.decl->loader, base_dir(), p.batch, p.decl->batches, p.decl->name));
    enter_stage(0);
  }

  // A stage's loader and lr-scale (each already the previous stage's when the stage sets none).
  void enter_stage(int64_t stage) {
    state_.stage = stage;
    if (x_->curriculum.empty()) {
      state_.loader = run_decl().loader->name;
      return;
    }
    const StageDecl& st = x_->curriculum[static_cast<size_t>(stage)];
    state_.loader = st.loader->name;
    state_.lr_scale = st.lr_scale;
  }

  // ---- the loop -------------------------------------------------------------

  void loop() {
    state_.loop_clock.emplace();
    const int64_t steps = run_decl().steps;
    // A step stopped at its exchange has read its records: a checkpoint on the way out resumes from here.
    if (comm_->size() > 1 && state_.positions.is_null()) state_.positions = loader_positions();
    if (resuming())
      run_passes(resume_passes_due_, state_.step);  // cut short when the run stopped
    else
      run_passes(passes_due(0), 0);
    for (int64_t k = state_.step + 1; k <= steps; ++k) {
      if (int sig = local_stop()) throw Stopped{sig};
      train_step(k);
      run_passes(passes_due(k), k);
      checkpoints_.renew_lock();
      if (checkpoint_due(k)) checkpoint();
      report_.status("running", /*throttle=*/true);
    }
    // A signal after the last step's exchange (in the last passes) still stops every node alike.
    if (comm_->size() > 1)
      if (int sig = comm_->first_nonzero(StopSignals::pending())) throw Stopped{sig};
    timings_.total_s = state_.loop_clock->seconds();
    report_.done(timings_);
  }

  // Only the leading rank writes checkpoints.
  bool checkpoint_due(int64_t k) const {
    if (!checkpoints_.enabled() || !comm_->leads()) return false;
    const auto& every = run_decl().checkpoint_every;
    return (every && k % *every == 0) || k == run_decl().steps;
  }

  void train_step(int64_t k) {
    state_.in_flight = k;
    Stopwatch clock;
    const RunDecl& r = run_decl();
    const int64_t m = r.microbatches * comm_->size() * (group_ ? group_->size() : 1);  // over all nodes or GPUs
    const int64_t seq = r.loader->seq_len;
    StepSums sums = run_step(group_.get(), dev_, c_, *train_feeds_.at(state_.loader), k, tokens_, targets_, *comm_);
    double exchange_s = 0;
    if (exchange_.step) {
      Stopwatch exchange_clock;
      if (int sig = exchange_.step->exchange(*dev_.device, sums, StopSignals::pending())) throw Stopped{sig};
      exchange_s = exchange_clock.seconds();
    }
    const std::vector<double>& metric_sums = sums.metrics;
    const std::vector<double>& tap_sums = sums.taps;
    float loss = static_cast<float>(sums.loss / static_cast<double>(m));
    if (auto which = first_nonfinite(*dev_.device, loss)) nonfinite(k, *which);

    double lr = schedule_lr(*r.optimizer->lr, k, r.steps) * state_.lr_scale;
    StepStats stats = update_step(group_.get(), dev_, k, lr, wants_optimizer_taps(r));

    state_.step = k;
    state_.train_loss = loss;
    state_.positions = loader_positions();  // a checkpoint of this step resumes from here
    state_.pending_passes = passes_due(k);  // and runs these first, until they have run
    state_.in_flight = 0;
    state_.records += r.batch;
    state_.tokens += r.batch * (seq + 1);
    double step_s = clock.seconds();
    timings_.step_s.push_back(step_s);

    Json rec = {{"kind", "step"},
                {"step", k},
                {"train/loss", f32(loss)},
                {"lr", f32(lr)},
                {"records", state_.records},
                {"tokens", state_.tokens},
                {"stage", state_.stage},
                {"elapsed_s", state_.loop_clock->seconds()},
                {"step_s", step_s}};
    if (exchange_.step) rec["exchange_s"] = exchange_s;  // several nodes: the gradient exchange's part of step_s
    for (size_t i = 0; i < metric_sums.size(); ++i)
      rec["train/" + c_.train.traced.metrics[i].first] = f32(metric_sums[i] / static_cast<double>(m));
    for (size_t i = 0; i < tap_sums.size(); ++i)
      rec[c_.train.taps[i].metric] = f32(tap_sums[i] / static_cast<double>(m));
    add_optimizer_taps(r, stats, rec);
    report_.record(rec);
  }

  [[noreturn]] void nonfinite(int64_t k, const std::string& which) {
    report_.event("nonfinite", k, {{"value", which}});
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

  // The run line's `evals`: name@every of each pass.
  std::vector<std::string> eval_schedule() const {
    std::vector<std::string> evals;
    for (const auto& p : c_.passes) evals.push_back(fmt::format("{}@{}", p.decl->name, x_->every(*p.decl)));
    return evals;
  }

  // Runs the named passes in declaration order. Those not yet run stay in
  // the state's pending passes, which a checkpoint written on the way out records.
  void run_passes(const std::vector<std::string>& names, int64_t k) {
    state_.pending_passes = names;
    for (size_t i = 0; i < c_.passes.size(); ++i) {
      const std::string& name = c_.passes[i].decl->name;
      if (std::find(names.begin(), names.end(), name) == names.end()) continue;
      if (int sig = local_stop()) throw Stopped{sig};
      report_.status("evaluating");
      PassResult r = run_pass(i);
      report_.eval_record(name, k, r);
      for (const auto& [metric, v] : r) state_.set_last_eval(name == "eval" ? metric : name + ":" + metric, v);
      report_.eval_line(name, k, r);
      auto& pending = state_.pending_passes;
      pending.erase(std::find(pending.begin(), pending.end(), name));
      checkpoints_.renew_lock();  // a pass may be long
    }
    // The curriculum comes after all the passes due at a step (not after the last step's).
    size_t next = static_cast<size_t>(state_.stage) + 1;
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
      if (int sig = local_stop()) {
        (void)dev_.device->kept_scalars();  // the batches' so far: not for anything else
        throw Stopped{sig};                 // the pass is abandoned, not recorded
      }
      feed.batch(b, tokens_, targets_);
      run_pass_batch(dev_, c_, i, tokens_, targets_);
    }
    add_kept_pass_scalars(dev_, loss, sums);
    // Every batch has the same number of tokens: the mean of batch means is the mean over tokens.
    PassResult r;
    r.emplace_back("eval/loss", f32(loss / static_cast<double>(n)));
    for (size_t m = 0; m < sums.size(); ++m)
      r.emplace_back("eval/" + p.step.traced.metrics[m].first, f32(sums[m] / static_cast<double>(n)));
    timings_.pass_s.push_back(clock.seconds());
    return r;
  }

  // After the passes due at a step (not the last step's): the next stage, when its :when holds.
  void maybe_advance(const std::string& pass, int64_t k) {
    size_t next = static_cast<size_t>(state_.stage) + 1;
    const StageDecl& st = x_->curriculum[next];
    std::optional<std::string> why = stage_condition_met(*c_.interp, st, pass, k, state_);
    if (!why) return;
    report_.event("stage", k,
                  {{"from", state_.stage}, {"to", static_cast<int64_t>(next)}, {"name", st.name}, {"condition", *why}});
    enter_stage(static_cast<int64_t>(next));
    report_.stage_line(state_.stage, st.name, k, *why);
  }

  // ---- checkpoints and resume ----------------------------------------------

  Json loader_positions() const {
    Json j = Json::object();
    for (const auto& [name, feed] : train_feeds_) j[name] = feed->position();
    return j;
  }

  StateIdentity state_identity() const {
    return {run_decl().seed, req_.env.threads, manifest_json(*x_), optimizer_json(*run_decl().optimizer),
            x_->slug,        c_.graph_hash};
  }

  // The checkpoint of the last completed step, with the passes still due at it.
  void checkpoint() {
    report_.status("checkpointing");
    Json state = state_.to_state_json(state_identity(), loader_positions());
    // (only after a failed metrics write: the record the resumed run writes first)
    if (const Json& u = report_.unwritten(); !u.is_null() && u.value("kind", "") != "meta")
      state["unwritten_records"] = Json::array({u});
    keep_unacknowledged(state, report_.unacknowledged());
    ckpt::CheckpointData d;
    d.step = state_.step;
    download_for_checkpoint(*dev_.device, c_.params, d);
    d.state = std::move(state);
    ckpt::WriteResult w;
    try {
      w = checkpoints_.write(d, run_decl().keep);
    } catch (const UserError& e) {
      report_.checkpoint_failed(state_.step, e);
      throw;
    }
    state_.last_checkpoint = CheckpointRef{state_.step, w.path};
    report_.checkpoint_written(state_.step, w);
  }

  // Restores everything a step depends on; refuses what cannot continue.
  void load_resume() {
    const ResumePoint& from = resume_point();
    ResumeCheck check = check_resume(from, resume_expectations(), *x_, c_.graph_hashes, req_.env.threads);
    differences_ = check.differences;
    if (!check.refused.empty()) {
      report_.resume_lines(from.path, differences_);
      throw UserError(check.refused);
    }
    const ckpt::ResumeState& saved = check.saved;
    upload_from_checkpoint(*dev_.device, c_.params, from.data, from.path);
    if (group_) group_->upload(from.data, from.path);
    state_.restore(saved, from.step);
    timings_.first_step = state_.step;
    for (const auto& [name, position] : saved.positions) train_feeds_.at(name)->restore(position);
    resume_passes_due_ = saved.passes_due;
    resume_unwritten_ = saved.unwritten;
    report_.carry(kept_unacknowledged(from));
    if (state_.stage >= 0 && static_cast<size_t>(state_.stage) < x_->curriculum.size())
      state_.lr_scale = x_->curriculum[static_cast<size_t>(state_.stage)].lr_scale;
    state_.positions = loader_positions();
    state_.last_checkpoint = CheckpointRef{state_.step, from.path};
  }

  ckpt::ResumeExpectations resume_expectations() const {
    ckpt::ResumeExpectations e;
    for (const auto& [name, feed] : train_feeds_) e.loaders.push_back(name);
    for (const auto& p : c_.passes) e.passes.push_back(p.decl->name);
    e.stages = std::max<int64_t>(1, static_cast<int64_t>(x_->curriculum.size()));
    return e;
  }

  // ---- the end ----------------------------------------------------------------

  // Whether a run ending early writes a checkpoint first: of a step not yet
  // written, or with passes still due at it.
  bool checkpoint_on_the_way_out() const {
    if (!checkpoints_.enabled() || !comm_->leads()) return false;
    const auto& last = state_.last_checkpoint;
    return !last || last->step != state_.step || !state_.pending_passes.empty();
  }

  int finish_stopped(int sig) {
    if (checkpoint_on_the_way_out()) {
      try {
        checkpoint();
      } catch (const UserError& e) {
        return finish_failed(e);
      }
    }
    if (state_.loop_clock) timings_.total_s = state_.loop_clock->seconds();
    try {
      report_.stopping(sig, StopSignals::since_signal());
      report_.stopped(timings_);
    } catch (const MetricsWriteError& e) {
      return finish_failed(e);  // the checkpoint is written
    }
    return 128 + sig;
  }

  // A metrics record that cannot be written stops the run, after a checkpoint
  // of the step it belonged to, so that a resume continues the run and the file.
  int finish_metrics_failed(const MetricsWriteError& e) {
    if (checkpoint_on_the_way_out()) {
      try {
        checkpoint();
      } catch (const UserError& ce) {
        Reporter::error_line(ce);
      }
    }
    return finish_failed(e);
  }

  int finish_failed(const UserError& e) {
    if (state_.loop_clock) timings_.total_s = state_.loop_clock->seconds();
    report_.failed(e, state_.in_flight ? state_.in_flight : state_.step, timings_);
    return 1;
  }

  int stop_before_start(int sig) {
    report_.stopped_before_start(sig, StopSignals::since_signal());
    return 128 + sig;
  }

  const RunRequest& req_;
  const std::string device_name_{to_string(req_.env.device)};  // every report names the device from here
  std::unique_ptr<Communicator> comm_;
  RunState state_;
  Reporter report_;
  RunCheckpoints checkpoints_;
  Compiled c_;
  Experiment* x_ = nullptr;
  RunDevice dev_;
  NodeExchange exchange_;               // several nodes (ended before dev_)
  std::unique_ptr<DeviceGroup> group_;  // several GPUs: ranks 1 ... (rank 0 is dev_)
  std::map<std::string, std::unique_ptr<TrainFeed>> train_feeds_;
  std::vector<std::unique_ptr<PassFeed>> pass_feeds_;
  std::vector<int32_t> tokens_, targets_;

  std::vector<ResumeDifference> differences_;
  std::vector<std::string> resume_passes_due_;
  std::vector<Json> resume_unwritten_;
  Timings timings_;
};

}  // namespace

int run_session(const RunRequest& req) {
  StopSignals::install();
  Session s(req);
  return s.run();
}

}  // namespace sx
