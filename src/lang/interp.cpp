#include "lang/interp.h"

#include <algorithm>
#include <filesystem>

#include "lang/experiment.h"
#include "lang/std_files.h"
#include "reader/reader.h"
#include "util/printable.h"

namespace sx {

namespace {
// Nested evaluation without calls (deeply nested data or expressions) is bounded
// too, so that no program can exhaust the host stack.
constexpr int kMaxEvalDepth = 100'000;

struct DepthGuard {
  int& depth;
  explicit DepthGuard(int& d) : depth(d) { ++depth; }
  ~DepthGuard() { --depth; }
};
}  // namespace

const ValueP* Env::find(const std::string& name) const {
  for (const Env* e = this; e; e = e->parent.get()) {
    auto it = e->vars.find(name);
    if (it != e->vars.end()) return &it->second;
  }
  return nullptr;
}

std::vector<std::string> Env::names() const {
  std::vector<std::string> out;
  for (const Env* e = this; e; e = e->parent.get())
    for (const auto& [k, v] : e->vars) out.push_back(k);
  return out;
}

ValueP Args::get(const std::string& key) const {
  for (const auto& [k, v] : kw)
    if (k == key) return v;
  return nullptr;
}

Span Args::span_of(size_t k) const {
  if (k < pos_spans.size() && pos_spans[k].valid()) return pos_spans[k];
  if (k < pos.size() && pos[k]->span.valid() && pos_spans.empty()) return pos[k]->span;
  return call;
}

void Args::expect(size_t min, long max, const std::vector<std::string>& accepted) const {
  if (pos.size() < min || (max >= 0 && pos.size() > static_cast<size_t>(max))) {
    std::string want = max < 0                               ? fmt::format("at least {}", min)
                       : static_cast<size_t>(max) == min ? fmt::format("{}", min)
                                                         : fmt::format("{} to {}", min, max);
    throw UserError(Code::EVAL_003, call,
                    fmt::format("`{}` takes {} positional argument{}, found {}", fn_name, want,
                                (max == 1 || (max < 0 && min == 1)) ? "" : "s", pos.size()));
  }
  for (size_t k = 0; k < kw.size(); ++k) {
    const std::string& key = kw[k].first;
    if (std::find(accepted.begin(), accepted.end(), key) != accepted.end()) continue;
    std::vector<std::string> keys;
    for (const auto& a : accepted) keys.push_back(":" + a);
    std::string list = keys.empty() ? "none" : join_capped(keys, " ");
    UserError err(Code::EVAL_003, kw_spans[k],
                  fmt::format("`{}` has no keyword parameter `:{}`; it accepts {}", fn_name, key, list));
    if (auto near = nearest(key, accepted); !near.empty()) err.first().help = fmt::format("did you mean `:{}`?", near);
    throw err;
  }
}

std::vector<std::string> Params::names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : kw) out.push_back(k);
  return out;
}

Interp::Interp(int64_t work_limit)
    : globals_(std::make_shared<Env>()), limit_(work_limit), experiment_(std::make_unique<Experiment>()) {
  register_special_forms(*this);
  register_builtins_numbers(*this);
  register_builtins_lists(*this);
  register_builtins_strings(*this);
  register_declarations(*this);
  register_tensor_builtins(*this);  // last: it wraps the numeric builtins
}

Interp::~Interp() {
  for (const auto& w : closures_)
    if (auto c = w.lock()) c->env.reset();
  globals_->vars.clear();
}

std::shared_ptr<Closure> Interp::new_closure() {
  if (closures_.size() >= 2 * closures_live_ + 64) {
    std::erase_if(closures_, [](const std::weak_ptr<Closure>& w) { return w.expired(); });
    closures_live_ = closures_.size();
  }
  auto c = std::make_shared<Closure>();
  closures_.push_back(c);
  return c;
}

void Interp::define(const std::string& name, ValueP v) { globals_->vars[name] = std::move(v); }

void Interp::builtin(const std::string& name, std::function<ValueP(Interp&, Args&)> fn) {
  auto b = std::make_shared<Builtin>();
  b->name = name;
  b->fn = std::move(fn);
  define(name, object(b));
}

void Interp::special(const std::string& name, SpecialForm f) { specials_[name] = std::move(f); }

void Interp::charge(int64_t n, Span at) {
  if (n > limit_ - work_) {
    work_ = limit_ + 1;
    throw error_here(Code::EVAL_041, at, fmt::format("the compile-time work budget of {} was exceeded", limit_),
                     "raise SEXPGPU_EVAL_LIMIT, or do less work at compile time");
  }
  work_ += n;
  if (stop_flag && stop_flag->load(std::memory_order_relaxed)) throw Interrupted();
}

std::string Interp::call_chain(size_t max) const {
  std::vector<std::string> parts;
  for (size_t k = frames_.size(); k-- > 0 && parts.size() < max;) {
    const Frame& f = frames_[k];
    std::string where = Sources::global().where(f.def);
    parts.push_back(where.empty() ? f.name : fmt::format("{} ({})", f.name, where));
  }
  if (frames_.size() > max) parts.push_back(fmt::format("... {} more", frames_.size() - max));
  return fmt::format("{}", fmt::join(parts, " <- "));
}

namespace {
// Bundled libraries are registered under their name ("std/nn") and shown as "std/nn.sx".
bool in_bundled_file(const Span& s) {
  if (!s.valid()) return false;
  const SourceFile& f = Sources::global().get(s.file);
  return f.path.rfind("std/", 0) == 0 && f.display == f.path + ".sx";
}
}  // namespace

namespace {
// A declaration binds at most its own name, so the forms after a broken one can still be checked.
bool is_declaration(const Value& form) {
  if (form.kind != Kind::List || form.items.empty() || form.items[0]->kind != Kind::Symbol) return false;
  static const std::set<std::string> names = {"defknob", "defvariant", "defloader",     "defmodel",
                                              "defrun",  "defeval",    "defcurriculum", "defsweep"};
  return names.count(form.items[0]->s) != 0;
}
}  // namespace

void Interp::point_at_user_call(Diagnostic& d) const {
  if (!in_bundled_file(d.span)) return;
  for (size_t k = frames_.size(); k-- > 0;) {
    const Span& call = frames_[k].call;
    if (call.valid() && !in_bundled_file(call)) {
      d.notes.insert(d.notes.begin(), fmt::format("raised at {}, inside `{}` of the bundled library",
                                                  Sources::global().where(d.span), frames_[k].name));
      d.span = call;
      return;
    }
  }
}

UserError Interp::error_here(Code c, Span span, std::string message, std::string help) const {
  Diagnostic d{c, std::move(message), span, {}, std::move(help)};
  if (!frames_.empty()) d.notes.push_back("in: " + call_chain());
  point_at_user_call(d);
  return UserError(std::move(d));
}

namespace {
// f64, fp16, bf32, tf16...: a precision this language does not have.
bool looks_like_dtype(const std::string& s) {
  size_t i = s.starts_with("bf") || s.starts_with("tf") || s.starts_with("fp") ? 2 : s.starts_with("f") ? 1 : 0;
  return i > 0 && i < s.size() &&
         std::all_of(s.begin() + static_cast<std::ptrdiff_t>(i), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
}  // namespace

ValueP Interp::eval(const ValueP& form, const EnvP& env) {
  charge(1, form->span);
  switch (form->kind) {
    case Kind::Symbol: {
      if (const ValueP* v = env->find(form->s)) return *v;
      UserError err(Code::EVAL_001, form->span, fmt::format("`{}` is not defined here", form->s));
      if (is_special(form->s))
        err.first().message = fmt::format("`{}` is a special form and can only be called, as `({} ...)`",
                                          form->s, form->s);
      else if (err.first().help = did_you_mean(form->s, env->names()); err.first().help.empty() &&
                                                                            looks_like_dtype(form->s))
        err.first().help = "the precisions (and dtypes) are f32, bf16 and tf32";
      throw err;
    }
    case Kind::List:
      if (form->bracket) {
        std::vector<ValueP> out;
        out.reserve(form->items.size());
        DepthGuard g(eval_depth_);
        if (eval_depth_ > kMaxEvalDepth)
          throw error_here(Code::EVAL_042, form->span, "expected evaluation nested at most 100000 deep, found deeper");
        for (const auto& x : form->items) out.push_back(eval(x, env));
        return list(std::move(out), form->span);
      }
      return eval_list(form, env);
    default:
      return form;  // numbers, strings, keywords, booleans, nil and objects evaluate to themselves
  }
}

ValueP Interp::eval_body(const std::vector<ValueP>& forms, size_t from, const EnvP& env) {
  ValueP last = nil();
  for (size_t k = from; k < forms.size(); ++k) last = eval(forms[k], env);
  return last;
}

Args Interp::eval_args(const Value& form, const EnvP& env, std::string fn_name) {
  Args args;
  args.call = form.span;
  args.fn_name = std::move(fn_name);
  for (size_t k = 1; k < form.items.size(); ++k) {
    const ValueP& x = form.items[k];
    if (x->kind == Kind::Keyword) {
      if (k + 1 >= form.items.size())
        throw error_here(Code::EVAL_003, x->span,
                         fmt::format("expected a value after the keyword `:{}`, found the end of the call", x->s));
      args.kw.emplace_back(x->s, eval(form.items[++k], env));
      args.kw_spans.push_back(x->span);
    } else {
      args.pos.push_back(eval(x, env));
      args.pos_spans.push_back(x->span);
    }
  }
  return args;
}

ValueP Interp::eval_list(const ValueP& form, const EnvP& env) {
  if (form->items.empty()) return form;  // () is the empty list
  DepthGuard g(eval_depth_);
  if (eval_depth_ > kMaxEvalDepth)
    throw error_here(Code::EVAL_042, form->span, "expected evaluation nested at most 100000 deep, found deeper",
                     "look for a recursion without a base case");
  const ValueP& head = form->items[0];
  if (head->kind == Kind::Symbol) {
    // A local binding shadows a special form's name only if it exists; specials are not values.
    auto sp = specials_.find(head->s);
    if (sp != specials_.end() && !env->find(head->s)) return sp->second(*this, *form, env);
  }
  ValueP fn = eval(head, env);
  if (auto* c = fn->object<Closure>(); c && c->is_macro) return eval(macroexpand(*c, *form, env), env);
  std::string name = head->kind == Kind::Symbol ? head->s : display(*fn);
  if (fn->kind != Kind::Object || (!fn->object<Closure>() && !fn->object<Builtin>()))
    throw error_here(Code::EVAL_002, head->span,
                     fmt::format("expected a function to call, found {} `{}`", type_name(*fn), repr(*fn)),
                     form->items.size() == 1 ? "" : "to write a list of data, use [ ... ] or '( ... )");
  Args args = eval_args(*form, env, name);
  return apply(fn, args);
}

ValueP Interp::apply(const ValueP& fn, Args& args) {
  if (auto* b = fn->object<Builtin>()) {
    if (args.fn_name.empty()) args.fn_name = b->name;
    try {
      return b->fn(*this, args);
    } catch (UserError& e) {
      // Errors raised by a builtin without a position belong to the call.
      if (!e.first().span.valid()) e.first().span = args.call;
      if (e.first().notes.empty() && !frames_.empty()) e.first().notes.push_back("in: " + call_chain());
      point_at_user_call(e.first());
      throw;
    }
  }
  if (auto* c = fn->object<Closure>()) return apply_closure(*c, args);
  throw error_here(Code::EVAL_002, args.call, fmt::format("expected a function to call, found {}", type_name(*fn)));
}

ValueP Interp::call(const ValueP& fn, std::vector<ValueP> pos, Span at) {
  Args args;
  args.pos = std::move(pos);
  args.call = at;
  if (auto* c = fn->object<Closure>()) args.fn_name = c->name.empty() ? "fn" : c->name;
  return apply(fn, args);
}

ValueP Interp::apply_closure(const Closure& c, Args& args) {
  std::string name = c.name.empty() ? "fn" : c.name;
  if (frames_.size() >= static_cast<size_t>(kMaxCallDepth))
    throw error_here(Code::EVAL_042,
                     args.call,
                     fmt::format("expected calls nested at most {} deep, found deeper (calling `{}`)", kMaxCallDepth,
                                 name),
                     "look for a recursion without a base case");
  const Params& p = c.params;
  auto env = std::make_shared<Env>(c.env);
  auto accepted = [&] {
    std::vector<std::string> all = p.pos;
    if (!p.rest.empty()) all.push_back("& " + p.rest);
    for (const auto& [k, d] : p.kw) all.push_back(":" + k);
    return all.empty() ? std::string("no parameters") : fmt::format("[{}]", join_capped(all, " "));
  };
  for (size_t k = 0; k < args.kw.size(); ++k) {
    const auto& key = args.kw[k].first;
    bool known = std::any_of(p.kw.begin(), p.kw.end(), [&](const auto& d) { return d.first == key; });
    if (!known) {
      UserError err = error_here(Code::EVAL_003, args.kw_spans[k],
                                 fmt::format("`{}` has no keyword parameter `:{}`: it takes {}", name, key, accepted()));
      if (auto near = nearest(key, p.names()); !near.empty()) err.first().help = fmt::format("did you mean `:{}`?", near);
      throw err;
    }
  }
  if (args.pos.size() < p.pos.size())
    throw error_here(Code::EVAL_003, args.call,
                     fmt::format("`{}` is missing its argument `{}`: it takes {}", name, p.pos[args.pos.size()],
                                 accepted()));
  if (args.pos.size() > p.pos.size() && p.rest.empty())
    throw error_here(Code::EVAL_003, args.span_of(p.pos.size()),
                     fmt::format("`{}` takes {} positional argument{}, found {}: it takes {}", name, p.pos.size(),
                                 p.pos.size() == 1 ? "" : "s", args.pos.size(), accepted()));
  for (size_t k = 0; k < p.pos.size(); ++k) env->vars[p.pos[k]] = args.pos[k];
  if (!p.rest.empty())
    env->vars[p.rest] = list(std::vector<ValueP>(args.pos.begin() + static_cast<long>(p.pos.size()), args.pos.end()));
  frames_.push_back({name, c.def, args.call});
  struct Pop {
    std::vector<Frame>& f;
    ~Pop() { f.pop_back(); }
  } pop{frames_};
  for (const auto& [key, dflt] : p.kw) {
    ValueP given = args.get(key);
    env->vars[key] = given ? given : eval(dflt, env);
  }
  return eval_body(c.body, 0, env);
}

ValueP Interp::macroexpand(const Closure& m, const Value& form, const EnvP&) {
  Args args;
  args.call = form.span;
  args.fn_name = m.name;
  for (size_t k = 1; k < form.items.size(); ++k) {
    const ValueP& x = form.items[k];
    if (x->kind == Kind::Keyword && k + 1 < form.items.size() &&
        std::any_of(m.params.kw.begin(), m.params.kw.end(), [&](const auto& d) { return d.first == x->s; })) {
      args.kw.emplace_back(x->s, form.items[++k]);
      args.kw_spans.push_back(x->span);
    } else {
      args.pos.push_back(x);  // macros receive their arguments unevaluated
    }
  }
  ValueP out = apply_closure(m, args);
  // Code a macro builds has no position of its own: it stands where the call was.
  return out->span.valid() ? out : with_span(out, form.span);
}

void Interp::eval_file(const std::string& path, const std::string& display, Span from) {
  int32_t id;
  std::string key;
  if (path.rfind("std/", 0) == 0) {
    key = path;
    const StdFile* found = nullptr;
    for (const auto& f : std_files())
      if (f.name == path) found = &f;
    if (!found) {
      std::vector<std::string> names;
      for (const auto& f : std_files()) names.push_back(f.name);
      throw error_here(Code::EVAL_007, from,
                       fmt::format("expected a bundled library ({}), found `{}`", fmt::join(names, ", "), path),
                       did_you_mean(path, names));
    }
    if (required_.count(key)) return;
    id = Sources::global().add(path, path + ".sx", found->text);
  } else {
    std::error_code ec;
    auto canon = std::filesystem::weakly_canonical(path, ec);
    key = ec ? path : canon.string();
    if (required_.count(key)) return;
    if (std::find(requiring_.begin(), requiring_.end(), key) != requiring_.end()) {
      throw error_here(Code::EVAL_007, from, fmt::format("`{}` requires itself through a cycle", display),
                       "move what both files need into a third file that both require");
    }
    try {
      id = load_source(path, display, from);
      files_read.push_back(path);
    } catch (UserError& e) {
      if (from.valid()) e.first().code = Code::EVAL_007;
      throw;
    }
  }
  requiring_.push_back(key);
  struct Pop {
    std::vector<std::string>& r;
    ~Pop() { r.pop_back(); }
  } pop{requiring_};
  for (const auto& form : read_all(id)) {
    if (!is_declaration(*form)) {
      eval(form, globals_);
      continue;
    }
    try {
      eval(form, globals_);
    } catch (const UserError& e) {
      if (e.code() == Code::EVAL_041 || e.code() == Code::EVAL_042) throw;  // later forms would fail the same way
      declaration_errors.insert(declaration_errors.end(), e.diagnostics().begin(), e.diagnostics().end());
    }
  }
  required_.insert(key);
}

int64_t arg_int(const Args& a, size_t k, const char* what) {
  if (k >= a.pos.size() || a.pos[k]->kind != Kind::Int)
    throw UserError(Code::EVAL_004, a.span_of(k),
                    fmt::format("`{}` expected {} as argument {}, found {}", a.fn_name, what, k + 1,
                                k < a.pos.size() ? type_name(*a.pos[k]) : "nothing"));
  return a.pos[k]->i;
}

double arg_number(const Args& a, size_t k) {
  if (k >= a.pos.size() || !a.pos[k]->is_number())
    throw UserError(Code::EVAL_004, a.span_of(k),
                    fmt::format("`{}` expected a number as argument {}, found {}", a.fn_name, k + 1,
                                k < a.pos.size() ? type_name(*a.pos[k]) : "nothing"));
  return a.pos[k]->as_double();
}

const std::string& arg_string(const Args& a, size_t k) {
  if (k >= a.pos.size() || a.pos[k]->kind != Kind::String)
    throw UserError(Code::EVAL_004, a.span_of(k),
                    fmt::format("`{}` expected a string as argument {}, found {}", a.fn_name, k + 1,
                                k < a.pos.size() ? type_name(*a.pos[k]) : "nothing"));
  return a.pos[k]->s;
}

const std::vector<ValueP>& arg_list(const Args& a, size_t k) {
  if (k >= a.pos.size() || a.pos[k]->kind != Kind::List) {
    static const std::vector<ValueP> empty;
    if (k < a.pos.size() && a.pos[k]->kind == Kind::Nil) return empty;  // nil is the empty list
    throw UserError(Code::EVAL_004, a.span_of(k),
                    fmt::format("`{}` expected a list as argument {}, found {}", a.fn_name, k + 1,
                                k < a.pos.size() ? type_name(*a.pos[k]) : "nothing"));
  }
  return a.pos[k]->items;
}

}  // namespace sx
