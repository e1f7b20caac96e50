#pragma once
// The validated result of evaluating an experiment file: its knobs and
// variants, loaders, model, run, passes, curriculum and sweep, with the
// selection applied (the manifest) and the run's slug.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lang/interp.h"

namespace sx {

// A keyword argument as written: the key, its (unevaluated) expression, where.
struct KeyArg {
  std::string key;
  ValueP expr;
  Span key_span;
};

struct KnobDecl {
  std::string name;
  ValueP dflt;  // its kind is the knob's type
  std::string doc;
  std::vector<ValueP> choices;
  ValueP min, max;
  Span span;
  std::string forced_type;   // run settings whose default may be nil say their type here
  bool nullable = false;     // nil means "none" (checkpoint-every, eval-every, diagnostics)
  std::string type() const;  // "integer", "float", "string", "symbol", "boolean"; "" if none
};

struct VariantDecl {
  std::string name;
  std::vector<KeyArg> sets;  // knob name, value expression
  Span span;
};

// A tokenizer spec: (chars "abc" :unknown "?"), bytes, (bpe "tokenizer.json").
struct TokenizerSpec : Object {
  std::string kind;      // "chars", "bytes", "bpe"
  std::string alphabet;  // chars: the alphabet, one id per code point
  std::optional<std::string> unknown;
  std::string path;           // bpe, as written
  std::string resolved_path;  // bpe: relative to the experiment file, or s3://
  // bpe: the file read at the declaration (by tokenizer_file_reader) — its
  // vocabulary size and the parsed tokenizer the loader then uses.
  int64_t file_vocab = -1;
  std::shared_ptr<const void> file_model;
  std::string type_name() const override { return "tokenizer"; }
  int64_t vocab() const;  // -1 for bpe when its file was not read
};

// Reads a (bpe ...) tokenizer's file when it is declared, so that a bad file
// is an error at the declaration and (vocab loader) is known to `check`. The
// data stage sets it (the language stage cannot read data files); unset, the
// file is read when the data is.
std::function<void(TokenizerSpec&)>& tokenizer_file_reader();

struct LoaderDecl : Object {
  std::string name;
  Span span;
  std::vector<KeyArg> keys;  // kept until finalize
  EnvP env;
  bool finalized = false;
  std::vector<Diagnostic> failure;  // what finalizing it reported, when it failed
  // After finalize:
  std::string source;
  std::string format = "text";
  std::shared_ptr<TokenizerSpec> tokenizer;
  int64_t seq_len = 0;
  std::optional<bool> shuffle;
  std::string field = "text";
  std::optional<int64_t> vocab;  // :vocab for token formats
  std::string type_name() const override { return "loader"; }
  std::string repr() const override { return "#<loader " + name + ">"; }
  int64_t vocab_size() const;
};

// The model, kept as a function: the tracer calls it on placeholder tensors.
struct ModelDecl : Object {
  std::string name;
  std::vector<std::string> inputs;
  std::shared_ptr<Closure> fn;
  Span span;
  std::string type_name() const override { return "model"; }
  std::string repr() const override { return "#<model " + name + ">"; }
};

// (constant x) (warmup-cosine :peak :warmup :min) (linear-decay :from :to)
struct ScheduleSpec : Object {
  std::string kind;
  double value = 0, peak = 0, min = 0, from = 0, to = 0;
  int64_t warmup = 0;
  std::string type_name() const override { return "schedule"; }
};

// (adamw ...) (adam ...) (sgd ...), with PyTorch's defaults.
struct OptimizerSpec : Object {
  std::string kind;
  std::shared_ptr<ScheduleSpec> lr;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  std::optional<double> clip;
  std::vector<std::string> no_decay;
  double momentum = 0;
  bool nesterov = false;
  std::string type_name() const override { return "optimizer"; }
};

struct RunDecl {
  std::string name;
  Span span;
  std::vector<KeyArg> keys;
  EnvP env;
  // After finalize (run settings below are also knobs of the manifest):
  std::shared_ptr<ModelDecl> model;
  std::shared_ptr<LoaderDecl> loader;
  std::shared_ptr<OptimizerSpec> optimizer;
  int64_t batch = 0, microbatches = 1, steps = 0, seed = 0;
  std::string precision = "f32";
  std::vector<std::string> diagnostics;
  std::optional<int64_t> checkpoint_every, keep;
  std::optional<int64_t> eval_every;  // the override of every pass's :every
  std::string init_from;
};

struct EvalDecl : Object {
  std::string name;
  Span span;
  std::vector<KeyArg> keys;
  EnvP env;
  std::shared_ptr<LoaderDecl> loader;
  int64_t every = 0;  // as declared
  std::optional<int64_t> batches;
  std::optional<int64_t> batch;
  std::string type_name() const override { return "pass"; }
};

struct StageDecl {
  std::string name;
  Span span;
  std::vector<KeyArg> keys;
  std::shared_ptr<LoaderDecl> loader;  // null: keep the previous stage's
  double lr_scale = 1.0;
  ValueP when;  // unevaluated; evaluated by the run after passes, with metrics bound
  std::string pass = "eval";
  EnvP env;
};

struct SweepDecl {
  Span span;
  std::vector<std::pair<std::string, std::vector<ValueP>>> grid;
};

// One knob as the run uses it: its value and where the value came from.
struct KnobValue {
  std::string name;
  ValueP value;
  std::string source;  // "default", "variant", "override"
};

struct Experiment {
  std::string file;  // as given
  std::vector<KnobDecl> knobs;
  std::vector<VariantDecl> variants;
  std::vector<std::shared_ptr<LoaderDecl>> loaders;
  std::vector<std::shared_ptr<ModelDecl>> models;
  std::optional<RunDecl> run;
  std::vector<std::shared_ptr<EvalDecl>> evals;
  std::vector<StageDecl> curriculum;
  Span curriculum_span;
  std::optional<SweepDecl> sweep;

  // The selection applied: every knob (run settings first, then declared knobs).
  std::vector<KnobValue> manifest;
  std::string slug;

  // Knob reads made while the selected variant was not yet declared: a later
  // declaration of it that sets one of them is an error.
  std::vector<std::pair<std::string, Span>> early_knob_reads;

  const KnobDecl* knob(const std::string& name) const;
  const VariantDecl* variant(const std::string& name) const;
  const KnobValue* knob_value(const std::string& name) const;
  // The effective cadence of a pass (after --eval-every).
  int64_t every(const EvalDecl& e) const;
};

}  // namespace sx
