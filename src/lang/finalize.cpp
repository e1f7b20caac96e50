// After the whole file is evaluated: the selection is applied to every knob,
// the kept declarations are evaluated with the chosen values, and the
// experiment is checked as a whole.
#include <algorithm>

#include "lang/declarations.h"
#include "lang/error_list.h"
#include "lang/keys.h"
#include "lang/run_settings.h"
#include "lang/selection.h"
#include "util/printable.h"

namespace sx {

namespace {

UserError unknown_key(Interp& in, const KeyArg& a, const char* form, const std::vector<std::string>& keys) {
  std::vector<std::string> shown;
  for (const auto& k : keys) shown.push_back(":" + k);
  UserError e = in.error_here(Code::DEF_001, a.key_span,
                              fmt::format("{} has no key `:{}`; it takes {}", form, a.key, fmt::join(shown, " ")));
  if (auto near = nearest(a.key, keys); !near.empty()) e.first().help = fmt::format("did you mean `:{}`?", near);
  return e;
}

// Evaluates each key of a declaration, refusing keys outside `keys`.
std::vector<std::pair<const KeyArg*, ValueP>> eval_keys(Interp& in, const std::vector<KeyArg>& args, const EnvP& env,
                                                        const char* form, const std::vector<std::string>& keys) {
  std::vector<std::pair<const KeyArg*, ValueP>> out;
  for (const auto& a : args) {
    if (std::find(keys.begin(), keys.end(), a.key) == keys.end()) throw unknown_key(in, a, form, keys);
    out.emplace_back(&a, in.eval(a.expr, env));
  }
  return out;
}

Span where(const KeyArg& a) { return a.expr->span.valid() ? a.expr->span : a.key_span; }

UserError bad_value(Interp& in, const KeyArg& a, const char* form, const std::string& expected, const Value& found) {
  return in.error_here(
      Code::DEF_003, where(a),
      fmt::format("{} `:{}` expected {}, found {} `{}`", form, a.key, expected, type_name(found), repr(found)));
}

int64_t positive_int(Interp& in, const KeyArg& a, const Value& v, const char* form, int64_t min = 1) {
  if (v.kind != Kind::Int || v.i < min)
    throw bad_value(in, a, form, min == 0 ? "an integer of at least 0" : "a positive integer", v);
  return v.i;
}

template <typename T>
std::shared_ptr<T> named(Interp& in, const KeyArg& a, const ValueP& v, const char* form, const char* what,
                         const std::vector<std::string>& declared) {
  if (v->object<T>()) return std::static_pointer_cast<T>(v->obj);
  UserError e = in.error_here(
      Code::DEF_006, where(a),
      fmt::format("{} `:{}` expected a {}, found {} `{}`; the declared {}s are {}", form, a.key, what, type_name(*v),
                  repr(*v), what, declared.empty() ? "none" : join_capped(declared, ", ")));
  return (throw e, nullptr);
}

std::vector<std::string> names_of(const auto& decls) {
  std::vector<std::string> out;
  for (const auto& d : decls) out.push_back(d->name);
  return out;
}

// The variant's last `:name value`, which is the one that counts.
const KeyArg* setting_arg(const VariantDecl& v, const std::string& name) {
  const KeyArg* last = nullptr;
  for (const auto& a : v.sets)
    if (a.key == name) last = &a;
  return last;
}

// "e.g. 1, 2 or 4 for a batch of 8": the smallest divisors of the batch.
std::string divisors_help(int64_t batch) {
  std::vector<std::string> ds;
  // (bounded: a huge prime batch must not take 10^12 divisions)
  for (int64_t d = 1; d < batch && d <= 1000 && ds.size() < 5; ++d)
    if (batch % d == 0) ds.push_back(std::to_string(d));
  if (ds.size() < 2 && batch > 1) ds.push_back(std::to_string(batch));
  if (ds.size() < 2) return fmt::format("choose microbatches 1 for a batch of {}", batch);
  std::string last = ds.back();
  ds.pop_back();
  return fmt::format("choose microbatches that divide the batch, e.g. {} or {} for a batch of {}", fmt::join(ds, ", "),
                     last, batch);
}

// :microbatches that do not divide :batch, said where the values came from:
// the --set or the variant that chose one of them, else the defrun.
UserError microbatches_error(Interp& in, const Experiment& x, const VariantDecl* variant) {
  const RunDecl& run = *x.run;
  std::string help = divisors_help(run.batch);
  const KnobValue& m = *x.knob_value("microbatches");
  const KnobValue& b = *x.knob_value("batch");
  if (m.source == "default" && b.source == "default")
    return in.error_here(
        Code::DEF_003, run.span,
        fmt::format("defrun `{}`: :microbatches {} does not divide :batch {}", run.name, run.microbatches, run.batch),
        help);
  auto from = [&](const KnobValue& k) {
    if (k.source == "override") return "--set " + k.name;
    if (k.source == "variant") return "variant " + variant->name;
    return "defrun :" + k.name;
  };
  // The value the user chose on the command line first, then the variant's.
  const KnobValue& chosen = m.source == "override" || (m.source == "variant" && b.source != "override") ? m : b;
  Span at = chosen.source == "variant" ? where(*setting_arg(*variant, chosen.name)) : Span{};
  std::string m_text = fmt::format("microbatches {}", run.microbatches);
  std::string b_text = fmt::format("batch {}", run.batch);
  (&chosen == &m ? b_text : m_text) += " (from " + from(&chosen == &m ? b : m) + ")";
  return in.error_here(Code::KNOB_004, at, fmt::format("{}: {} does not divide {}", from(chosen), m_text, b_text),
                       help);
}

}  // namespace

namespace {
void finalize_loader_keys(Interp& in, LoaderDecl& l) {
  const char* form = "defloader";
  const KeyArg* tokenizer_key = nullptr;
  for (auto& [a, v] : eval_keys(in, l.keys, l.env, form, declaration_keys("defloader"))) {
    if (a->key == "source") {
      if (v->kind != Kind::String || v->s.empty())
        throw bad_value(in, *a, form, "a path, glob, manifest or s3:// URI string", *v);
      l.source = v->s;
    } else if (a->key == "format") {
      static const std::vector<std::string> formats = {"text", "tokens-u16", "tokens-u32", "jsonl"};
      if (v->kind != Kind::Symbol || std::find(formats.begin(), formats.end(), v->s) == formats.end())
        throw bad_value(in, *a, form, "one of text, tokens-u16, tokens-u32, jsonl", *v);
      l.format = v->s;
    } else if (a->key == "tokenizer") {
      tokenizer_key = a;
      if (v->is_symbol("bytes")) {
        l.tokenizer = std::make_shared<TokenizerSpec>();
        l.tokenizer->kind = "bytes";
      } else if (v->object<TokenizerSpec>()) {
        l.tokenizer = std::static_pointer_cast<TokenizerSpec>(v->obj);
      } else {
        throw bad_value(in, *a, form, "a tokenizer: (chars \"...\"), bytes or (bpe \"tokenizer.json\")", *v);
      }
    } else if (a->key == "seq-len") {
      l.seq_len = positive_int(in, *a, *v, form);
    } else if (a->key == "shuffle") {
      if (v->kind != Kind::Bool) throw bad_value(in, *a, form, "true or false", *v);
      l.shuffle = v->b;
    } else if (a->key == "field") {
      if (v->kind != Kind::String) throw bad_value(in, *a, form, "a field name string", *v);
      l.field = v->s;
    } else if (a->key == "vocab") {
      l.vocab = positive_int(in, *a, *v, form);
    }
  }
  auto missing = [&](const char* key, const char* example) {
    return in.error_here(Code::DEF_002, l.span, fmt::format("loader `{}` needs `:{}`", l.name, key),
                         fmt::format("add {}", example));
  };
  if (l.source.empty()) throw missing("source", ":source \"data/train.txt\"");
  if (l.seq_len == 0) throw missing("seq-len", ":seq-len 16");
  bool tokens = l.format == "tokens-u16" || l.format == "tokens-u32";
  if (tokens && !l.vocab) throw missing("vocab", ":vocab 50257 (the token ids are below it)");
  if (tokens && l.tokenizer)
    throw in.error_here(Code::DEF_003, where(*tokenizer_key),
                        fmt::format("loader `{}` reads {} (token ids): it takes no :tokenizer", l.name, l.format));
  if (!tokens && !l.tokenizer) throw missing("tokenizer", ":tokenizer bytes, or :tokenizer (chars \"abc...\")");
}
}  // namespace

// A loader is finalized once; one that failed fails again the same way (not
// half-finalized) when (vocab L) or the run asks for it after the error was
// collected.
void finalize_loader(Interp& in, LoaderDecl& l) {
  if (l.finalized) {
    if (!l.failure.empty()) throw UserError(l.failure);
    return;
  }
  l.finalized = true;
  try {
    finalize_loader_keys(in, l);
  } catch (const UserError& e) {
    l.failure = e.diagnostics();
    throw;
  }
}

int64_t LoaderDecl::vocab_size() const {
  if (vocab) return *vocab;
  return tokenizer ? tokenizer->vocab() : -1;
}

const KnobDecl* Experiment::knob(const std::string& name) const {
  for (const auto& k : knobs)
    if (k.name == name) return &k;
  return nullptr;
}

const VariantDecl* Experiment::variant(const std::string& name) const {
  for (const auto& v : variants)
    if (v.name == name) return &v;
  return nullptr;
}

const KnobValue* Experiment::knob_value(const std::string& name) const {
  for (const auto& k : manifest)
    if (k.name == name) return &k;
  return nullptr;
}

int64_t Experiment::every(const EvalDecl& e) const { return run && run->eval_every ? *run->eval_every : e.every; }

void finalize(Interp& in, const Selection& sel, const std::string& file) {
  Experiment& x = in.experiment();
  x.file = file;
  if (!x.run)
    throw UserError(
        Code::DEF_004, {}, fmt::format("{} has no (defrun ...): an experiment needs exactly one", file),
        "add (defrun <name> :model <model> :loader <loader> :batch 8 :steps 100 :optimizer (adamw :lr 3e-4))");
  RunDecl& run = *x.run;

  // The selection names only what exists.
  const VariantDecl* variant = nullptr;
  if (!sel.variant.empty()) {
    variant = x.variant(sel.variant);
    if (!variant) {
      std::vector<std::string> names;
      for (const auto& v : x.variants) names.push_back(v.name);
      throw UserError(Code::KNOB_002, {},
                      fmt::format("--variant `{}` is not declared; the variants are {}", sel.variant,
                                  names.empty() ? "none" : join_capped(names, ", ")),
                      names.empty() ? fmt::format("declare it with (defvariant {} :knob value ...)", sel.variant)
                                    : did_you_mean(sel.variant, names));
    }
  }
  std::vector<std::string> all_knobs;
  for (const auto& k : x.knobs) all_knobs.push_back(k.name);
  for (const auto& r : run_setting_names()) all_knobs.push_back(r);
  auto is_knob = [&](const std::string& n) {
    return std::find(all_knobs.begin(), all_knobs.end(), n) != all_knobs.end();
  };
  auto sets = effective_sets(sel);
  // The selection's errors are independent of each other: all of them are
  // reported at once, in the order --set, variants, values.
  std::vector<Diagnostic> errors;
  auto collect = [&](auto&& check) {
    try {
      check();
    } catch (const UserError& e) {
      errors.insert(errors.end(), e.diagnostics().begin(), e.diagnostics().end());
    }
  };
  for (const auto& [name, text] : sets)
    if (!is_knob(name))
      errors.push_back(
          {Code::KNOB_001,
           fmt::format("--set {}: `{}` is not a knob; the knobs are {}", name, name, join_capped(all_knobs, ", ")),
           {},
           {},
           did_you_mean(name, all_knobs)});
  // Every variant, selected or not, names only knobs and gives the file's own
  // knobs values they accept: `check` finds a broken variant before it is used.
  for (const auto& v : x.variants)
    for (const auto& a : v.sets) {
      if (!is_knob(a.key))
        collect([&] {
          throw in.error_here(Code::KNOB_001, a.key_span,
                              fmt::format("variant `{}` sets `{}`, which is not a knob; the knobs are {}", v.name,
                                          a.key, join_capped(all_knobs, ", ")),
                              did_you_mean(a.key, all_knobs));
        });
      for (const auto& k : x.knobs)
        if (k.name == a.key)
          collect([&] {
            check_knob_value(k, a.expr, a.expr->span.valid() ? a.expr->span : a.key_span,
                             fmt::format("variant {}", v.name));
          });
    }

  // A knob's value: --set over the variant over the default.
  auto choose = [&](const KnobDecl& k) {
    KnobValue kv{k.name, k.dflt, "default"};
    collect([&] { kv = chosen_knob_value(k, variant, sets); });
    if (k.type() == "float" && kv.value->kind == Kind::Int) kv.value = floating(static_cast<double>(kv.value->i));
    return kv;
  };
  std::vector<KnobValue> user;
  for (const auto& k : x.knobs) user.push_back(choose(k));
  // A run setting's type and range do not depend on the file, so its --set is
  // checked here with the others, before defrun is evaluated.
  for (const auto& set : sets)
    if (run_setting(set.first))
      collect(
          [&] { parse_knob_value(run_setting_decl(set.first, nil(), run.span), set.second, "--set " + set.first); });
  if (!errors.empty()) throw UserError(std::move(errors));
  x.manifest = user;  // (knob x) inside defrun reads these
  // From here on each declaration is checked on its own, and all their errors
  // are reported together, in file order.

  // The run, evaluated with the knobs chosen.
  const char* form = "defrun";
  std::map<std::string, ValueP> setting_defaults;
  collect([&] {
    for (auto& [a, v] : eval_keys(in, run.keys, run.env, form, declaration_keys("defrun"))) {
      if (a->key == "model") {
        run.model = named<ModelDecl>(in, *a, v, form, "model", names_of(x.models));
      } else if (a->key == "loader") {
        run.loader = named<LoaderDecl>(in, *a, v, form, "loader", names_of(x.loaders));
      } else if (a->key == "optimizer") {
        if (!v->object<OptimizerSpec>())
          throw bad_value(in, *a, form, "an optimizer: (adamw ...), (adam ...) or (sgd ...)", *v);
        run.optimizer = std::static_pointer_cast<OptimizerSpec>(v->obj);
      } else if (a->key == "keep") {
        run.keep = positive_int(in, *a, *v, form);
      } else if (a->key == "init-from") {
        if (v->kind != Kind::String) throw bad_value(in, *a, form, "a .safetensors path or s3:// URI", *v);
        run.init_from = v->s;
      } else if (a->key == "diagnostics") {
        if (v->kind != Kind::List && v->kind != Kind::Nil) throw bad_value(in, *a, form, "a list of globs", *v);
        std::vector<std::string> globs;
        for (const auto& g : v->items) {
          if (g->kind != Kind::String && g->kind != Kind::Symbol) throw bad_value(in, *a, form, "glob strings", *g);
          globs.push_back(g->s);
        }
        setting_defaults["diagnostics"] = string(fmt::format("{}", fmt::join(globs, ",")), where(*a));
      } else {
        setting_defaults[a->key] = v;
      }
    }
    // (After a key that failed, such as a misspelt :step, a missing key is most likely that one.)
    for (auto [key, example] : {std::pair{"model", ":model <a defmodel>"},
                                {"loader", ":loader <a defloader>"},
                                {"batch", ":batch 8"},
                                {"steps", ":steps 100"},
                                {"optimizer", ":optimizer (adamw :lr 3e-4)"}})
      if (std::none_of(run.keys.begin(), run.keys.end(), [k = key](const KeyArg& a) { return a.key == k; }))
        throw in.error_here(Code::DEF_002, run.span, fmt::format("defrun `{}` needs `:{}`", run.name, key),
                            fmt::format("add {}", example));
  });

  // The run settings are knobs too; they come first in the manifest.
  std::vector<KnobValue> settings;
  collect([&] {
    for (const auto& name : run_setting_names()) {
      const bool given = setting_defaults.count(name) > 0;  // (not when defrun's evaluation failed before it)
      ValueP dflt = given ? setting_defaults[name] : nullptr;
      if (!dflt) dflt = run_setting_default(*run_setting(name));
      KnobDecl k = run_setting_decl(name, dflt, run.span);
      for (const auto& a : run.keys)
        if (given && a.key == name) check_knob_value(k, dflt, where(a), "defrun :" + name);
      KnobValue kv = choose(k);
      // --steps, --eval-every, --diagnostics (and SEXPGPU_DIAGNOSTICS) override the file.
      if (name == "steps" && sel.steps) kv = {name, integer(*sel.steps), "override"};
      if (name == "eval-every" && sel.eval_every) kv = {name, integer(*sel.eval_every), "override"};
      if (name == "diagnostics") {
        if (sel.diagnostics)
          kv = {name, string(*sel.diagnostics), "override"};
        else if (sel.env_diagnostics)
          kv = {name, string(*sel.env_diagnostics), "override"};
      }
      if (kv.source == "variant") {
        const KeyArg& a = *setting_arg(*variant, name);
        check_knob_value(k, kv.value, where(a), "variant " + variant->name);
      } else if (!(kv.source == "default" && kv.value->kind == Kind::Nil)) {
        // (a required setting left out of defrun was reported as a missing key)
        check_knob_value(k, kv.value, {}, kv.source == "override" ? "--" + name : name);
      }
      settings.push_back(kv);
    }
    x.manifest = settings;
    x.manifest.insert(x.manifest.end(), user.begin(), user.end());
    auto setting = [&](const char* n) { return x.knob_value(n)->value; };
    run.steps = setting("steps")->i;
    run.batch = setting("batch")->i;
    run.microbatches = setting("microbatches")->i;
    run.seed = setting("seed")->i;
    run.precision = setting("precision")->s;
    if (ValueP c = setting("checkpoint-every"); c->kind == Kind::Int) run.checkpoint_every = c->i;
    if (ValueP e = setting("eval-every"); e->kind == Kind::Int) run.eval_every = e->i;
    run.diagnostics.clear();
    if (ValueP d = setting("diagnostics"); d->kind == Kind::String) {
      std::string s = d->s;
      for (size_t b = 0; b < s.size();) {
        size_t e = s.find(',', b);
        if (e == std::string::npos) e = s.size();
        if (e > b) run.diagnostics.push_back(s.substr(b, e - b));
        b = e + 1;
      }
    }
    if (run.batch % run.microbatches != 0) throw microbatches_error(in, x, variant);
  });

  for (auto& l : x.loaders) collect([&] { finalize_loader(in, *l); });

  for (auto& e : x.evals)
    collect([&] {
      const char* ef = "defeval";
      for (auto& [a, v] : eval_keys(in, e->keys, e->env, ef, declaration_keys("defeval"))) {
        if (a->key == "loader")
          e->loader = named<LoaderDecl>(in, *a, v, ef, "loader", names_of(x.loaders));
        else if (a->key == "every")
          e->every = positive_int(in, *a, *v, ef, 0);
        else if (a->key == "batches")
          e->batches = positive_int(in, *a, *v, ef);
        else if (a->key == "batch")
          e->batch = positive_int(in, *a, *v, ef);
      }
      if (!e->loader)
        throw in.error_here(Code::DEF_002, e->span, fmt::format("pass `{}` needs `:loader`", e->name),
                            "add :loader <a defloader>");
    });

  // Each stage keeps the :loader and :lr-scale of the stage before it (stage 0:
  // the defrun's loader and 1) unless it sets its own.
  std::shared_ptr<LoaderDecl> loader = run.loader;
  double lr_scale = 1.0;
  for (auto& st : x.curriculum) {
    st.loader = loader;
    st.lr_scale = lr_scale;
    collect([&] {
      const char* sf = "stage";
      const KeyArg* loader_key = nullptr;
      for (const auto& a : st.keys) {
        static const std::vector<std::string> keys = declaration_keys("stage");
        if (std::find(keys.begin(), keys.end(), a.key) == keys.end()) throw unknown_key(in, a, sf, keys);
        if (a.key == "when") {
          st.when = a.expr;  // evaluated by the run after each pass
          continue;
        }
        ValueP v = in.eval(a.expr, st.env);
        if (a.key == "loader") {
          st.loader = named<LoaderDecl>(in, a, v, sf, "loader", names_of(x.loaders));
          loader_key = &a;
        } else if (a.key == "lr-scale") {
          if (!v->is_number() || v->as_double() < 0) throw bad_value(in, a, sf, "a non-negative number", *v);
          st.lr_scale = v->as_double();
        } else if (auto pass = v->object<EvalDecl>()) {
          st.pass = pass->name;  // `:pass eval` evaluates to the pass itself
        } else {
          if (v->kind != Kind::Symbol && v->kind != Kind::String) throw bad_value(in, a, sf, "a pass name", *v);
          st.pass = v->s;
        }
      }
      // The training step is traced once, at the run's window length: a stage
      // reading other windows would be cut to it.
      if (loader_key && st.loader && run.loader && st.loader->seq_len != run.loader->seq_len)
        throw in.error_here(
            Code::DEF_010, where(*loader_key),
            fmt::format("stage \"{}\" trains on loader `{}` with :seq-len {}, but the run's training step is traced at "
                        ":seq-len {} of loader `{}`",
                        st.name, st.loader->name, st.loader->seq_len, run.loader->seq_len, run.loader->name),
            fmt::format("give loader `{}` :seq-len {}: every stage trains on windows of the run's length",
                        st.loader->name, run.loader->seq_len));
      if (&st != &x.curriculum.front() && !st.when)
        throw in.error_here(Code::DEF_002, st.span, fmt::format("stage \"{}\" needs `:when`", st.name),
                            "add :when (< eval/loss 2.5), the condition to move on to it");
      if (std::none_of(x.evals.begin(), x.evals.end(), [&](const auto& e) { return e->name == st.pass; })) {
        std::string help = did_you_mean(st.pass, names_of(x.evals));
        throw in.error_here(
            Code::DEF_006, st.span,
            fmt::format("stage \"{}\" moves on after pass `{}`, which is not declared", st.name, st.pass),
            help.empty() ? "declare it with (defeval ...), or name another with :pass" : help);
      }
    });
    loader = st.loader;
    lr_scale = st.lr_scale;
  }

  if (x.sweep)
    for (const auto& [name, values] : x.sweep->grid)
      if (!is_knob(name))
        collect([&, n = name] {
          throw in.error_here(Code::KNOB_001, x.sweep->span,
                              fmt::format("defsweep varies `{}`, which is not a knob", n), did_you_mean(n, all_knobs));
        });
  if (!errors.empty()) throw in_file_order(std::move(errors));

  std::vector<std::pair<std::string, std::string>> canon;
  for (const auto& [name, text] : sets) canon.emplace_back(name, canonical(*x.knob_value(name)->value));
  x.slug = make_slug(sel.slug_base ? *sel.slug_base : file_stem(file), sel.variant, canon);
}

}  // namespace sx
