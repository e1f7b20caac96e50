#pragma once
// The compile-time evaluator: a small, lexically scoped Lisp over Values with a
// work budget and a recursion limit. Special forms live in special_forms.cpp,
// builtin functions in builtins_*.cpp, declarations in declarations.cpp.
#include <atomic>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "reader/value.h"
#include "util/error.h"
#include "util/interrupted.h"

namespace sx {

struct Env;
using EnvP = std::shared_ptr<Env>;
struct Experiment;
struct Selection;
struct TraceContext;
class Interp;

struct Env {
  std::unordered_map<std::string, ValueP> vars;
  EnvP parent;
  explicit Env(EnvP p = nullptr) : parent(std::move(p)) {}
  const ValueP* find(const std::string& name) const;
  std::vector<std::string> names() const;  // every visible name, for "did you mean"
};

// The arguments of one call, evaluated: positionals in order, then keywords in
// the order given. `call` is the whole call form, for positions.
struct Args {
  std::vector<ValueP> pos;
  std::vector<Span> pos_spans;  // where each positional was written (when it was)
  std::vector<std::pair<std::string, ValueP>> kw;
  std::vector<Span> kw_spans;  // where each keyword was written
  Span call;
  std::string fn_name;

  size_t size() const { return pos.size(); }
  const ValueP& operator[](size_t k) const { return pos[k]; }
  // The keyword's value, or nullptr when not given.
  ValueP get(const std::string& key) const;
  Span span_of(size_t k) const;  // a positional's span, or the call's
  // Refuses keywords outside `accepted` (E-EVAL-003, naming the accepted ones
  // and the nearest) and positional counts outside [min, max] (max < 0: any).
  void expect(size_t min, long max, const std::vector<std::string>& accepted = {}) const;
};

// A native function. It gets the evaluated arguments; it may return any Value.
struct Builtin : Object {
  std::string name;
  std::function<ValueP(Interp&, Args&)> fn;
  std::string type_name() const override { return "builtin"; }
  std::string repr() const override { return "#<builtin " + name + ">"; }
};

// A parameter list: positionals, `& rest`, then keyword parameters with default
// expressions, evaluated at call time in the function's environment.
struct Params {
  std::vector<std::string> pos;
  std::string rest;  // empty: none
  std::vector<std::pair<std::string, ValueP>> kw;
  std::vector<std::string> names() const;
};

struct Closure : Object {
  std::string name;  // "" for an anonymous fn
  Params params;
  std::vector<ValueP> body;
  EnvP env;
  Span def;  // where it was defined
  bool is_macro = false;
  std::string type_name() const override { return is_macro ? "macro" : "function"; }
  std::string repr() const override { return "#<" + type_name() + (name.empty() ? "" : " " + name) + ">"; }
};

using SpecialForm = std::function<ValueP(Interp&, const Value& form, const EnvP& env)>;

class Interp {
 public:
  static constexpr int kMaxCallDepth = 10'000;

  explicit Interp(int64_t work_limit = 10'000'000);
  ~Interp();

  // Evaluating.
  ValueP eval(const ValueP& form, const EnvP& env);
  ValueP eval_body(const std::vector<ValueP>& forms, size_t from, const EnvP& env);
  ValueP apply(const ValueP& fn, Args& args);
  // Calls a function value on positional arguments (for map, filter, reduce, ...).
  ValueP call(const ValueP& fn, std::vector<ValueP> pos, Span at);
  ValueP macroexpand(const Closure& m, const Value& form, const EnvP& env);

  // Files: reads and evaluates every form of `path` (display: how errors name it)
  // into the global environment. `require` comes through here, once per file.
  void eval_file(const std::string& path, const std::string& display, Span from = {});

  // One unit of work per form, n per element walked by builtins.
  void charge(int64_t n, Span at);
  int64_t work_done() const { return work_; }

  // Every closure is made through here. Closures and environments own each
  // other (a top-level function is held by the globals and holds them), so
  // the destructor cuts each live closure from its environment: nothing an
  // Interp made outlives it in a cycle.
  std::shared_ptr<Closure> new_closure();

  // Defining the language.
  void define(const std::string& name, ValueP v);
  void builtin(const std::string& name, std::function<ValueP(Interp&, Args&)> fn);
  void special(const std::string& name, SpecialForm f);
  bool is_special(const std::string& name) const { return specials_.count(name) != 0; }

  const EnvP& globals() const { return globals_; }
  Experiment& experiment() { return *experiment_; }

  // The innermost calls, "f (a.sx:3:1) <- g (a.sx:9:1)", for E-EVAL-041/042.
  std::string call_chain(size_t max = 5) const;
  // A UserError at `span` with the call chain attached as an "in:" note.
  UserError error_here(Code c, Span span, std::string message, std::string help = {}) const;
  // An error raised inside a bundled library (std/nn) points at the user's own
  // call that led there, the innermost frame called from the user's files; the
  // library's position becomes a note.
  void point_at_user_call(Diagnostic& d) const;

  struct Frame {
    std::string name;
    Span def;
    Span call;
  };
  const std::vector<Frame>& frames() const { return frames_; }

  // The enclosing `scope` names, outermost first; joined with "." they are the
  // model path of a parameter made here.
  std::vector<std::string> scopes;

  // The selection the file is evaluated under; `(knob x)` reads it.
  const Selection* selection = nullptr;

  // Set by a stopping signal: evaluation ends at the next form with Interrupted,
  // so a long compile-time computation does not hold a run past its signal.
  const std::atomic<bool>* stop_flag = nullptr;

  // The model trace in progress, if any: tensor operations are allowed only then.
  TraceContext* trace = nullptr;

  // Errors of top-level declarations (defknob, defloader, ...): evaluation goes
  // on past them, so that `check` reports every one, in file order.
  std::vector<Diagnostic> declaration_errors;

  // Every file of the user's evaluated (the experiment and what it requires,
  // not the bundled libraries), as read, and each `require` written with an
  // absolute path: what `sexpgpu bundle` packs, and what it cannot.
  std::vector<std::string> files_read;
  std::vector<std::string> absolute_requires;

 private:
  ValueP eval_list(const ValueP& form, const EnvP& env);
  ValueP apply_closure(const Closure& c, Args& args);
  Args eval_args(const Value& form, const EnvP& env, std::string fn_name);

  EnvP globals_;
  std::vector<std::weak_ptr<Closure>> closures_;  // compacted when it doubles
  size_t closures_live_ = 0;                      // live entries at the last compaction
  std::unordered_map<std::string, SpecialForm> specials_;
  int64_t work_ = 0;
  int64_t limit_;
  int eval_depth_ = 0;
  std::vector<Frame> frames_;
  std::set<std::string> required_;      // canonical paths already evaluated
  std::vector<std::string> requiring_;  // the files being evaluated, innermost last
  std::unique_ptr<Experiment> experiment_;
  friend struct InterpAccess;
};

// Interrupted (util/interrupted.h) is thrown when `stop_flag` is set during evaluation.

// Registration of every piece of the language into an interpreter.
void register_special_forms(Interp& in);
void register_builtins_numbers(Interp& in);  // arithmetic, comparison, int/float
void register_builtins_lists(Interp& in);    // list cons first rest nth len ...
void register_builtins_strings(Interp& in);  // str format symbol keyword error print
void register_declarations(Interp& in);      // defknob defvariant defloader defmodel ...
void register_tensor_builtins(Interp& in);   // param matmul softmax ... and tensor arithmetic

// Helpers for builtins: checked accessors that raise E-EVAL-004 naming the
// function, the argument and what it expected.
int64_t arg_int(const Args& a, size_t k, const char* what = "an integer");
double arg_number(const Args& a, size_t k);
const std::string& arg_string(const Args& a, size_t k);
const std::vector<ValueP>& arg_list(const Args& a, size_t k);

}  // namespace sx
