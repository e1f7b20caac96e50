// The builtins that make the values declarations take: tokenizers, optimizers
// and learning-rate schedules, with PyTorch's defaults; and `vocab`.
#include <filesystem>

#include "lang/declarations.h"

namespace sx {

namespace {

double kw_number(const Args& a, const std::string& key, double dflt) {
  ValueP v = a.get(key);
  if (!v) return dflt;
  if (!v->is_number())
    throw UserError(Code::EVAL_004, v->span.valid() ? v->span : a.call,
                    fmt::format("`{}` expected a number for `:{}`, found {}", a.fn_name, key, type_name(*v)));
  return v->as_double();
}

int64_t kw_int(const Args& a, const std::string& key, int64_t dflt, int64_t min) {
  ValueP v = a.get(key);
  if (!v) return dflt;
  if (v->kind != Kind::Int || v->i < min)
    throw UserError(
        Code::EVAL_004, v->span.valid() ? v->span : a.call,
        fmt::format("`{}` expected an integer of at least {} for `:{}`, found {}", a.fn_name, min, key, repr(*v)));
  return v->i;
}

void require_kw(const Args& a, const std::vector<std::string>& keys) {
  for (const auto& k : keys)
    if (!a.get(k)) throw UserError(Code::EVAL_003, a.call, fmt::format("`{}` needs `:{}`", a.fn_name, k));
}

std::shared_ptr<ScheduleSpec> as_schedule(const Args& a, const ValueP& v) {
  if (v->object<ScheduleSpec>()) return std::static_pointer_cast<ScheduleSpec>(v->obj);
  if (v->is_number()) {
    auto s = std::make_shared<ScheduleSpec>();
    s->kind = "constant";
    s->value = v->as_double();
    return s;
  }
  throw UserError(Code::EVAL_004, v->span.valid() ? v->span : a.call,
                  fmt::format("`{}` expected a number or a schedule for `:lr`, found {}", a.fn_name, type_name(*v)));
}

ValueP make_optimizer(const Args& a, const std::string& kind) {
  auto o = std::make_shared<OptimizerSpec>();
  o->kind = kind;
  if (kind == "sgd") {
    a.expect(0, 0, {"lr", "momentum", "nesterov", "weight-decay", "clip", "no-decay"});
    o->momentum = kw_number(a, "momentum", 0.0);
    if (ValueP n = a.get("nesterov")) o->nesterov = n->truthy();
  } else {
    std::vector<std::string> keys = {"lr", "betas", "eps", "clip", "no-decay"};
    if (kind == "adamw") keys.push_back("weight-decay");
    a.expect(0, 0, keys);
    if (ValueP b = a.get("betas")) {
      if (b->kind != Kind::List || b->items.size() != 2 || !b->items[0]->is_number() || !b->items[1]->is_number())
        throw UserError(Code::EVAL_004, b->span.valid() ? b->span : a.call,
                        fmt::format("`{}` expected `:betas [b1 b2]`, found {}", kind, repr(*b)));
      o->beta1 = b->items[0]->as_double();
      o->beta2 = b->items[1]->as_double();
    }
    o->eps = kw_number(a, "eps", 1e-8);
  }
  require_kw(a, {"lr"});
  o->lr = as_schedule(a, a.get("lr"));
  // PyTorch's defaults: AdamW decays by 0.01, Adam and SGD not at all.
  o->weight_decay = kw_number(a, "weight-decay", kind == "adamw" ? 0.01 : 0.0);
  if (ValueP c = a.get("clip"); c && c->kind != Kind::Nil) o->clip = kw_number(a, "clip", 0);
  if (ValueP nd = a.get("no-decay")) {
    if (nd->kind != Kind::List && nd->kind != Kind::Nil)
      throw UserError(Code::EVAL_004, nd->span, fmt::format("`{}` expected `:no-decay` as a list of globs", kind));
    for (const auto& g : nd->items) {
      if (g->kind != Kind::String)
        throw UserError(Code::EVAL_004, g->span, "`:no-decay` expected glob strings such as \"*.b\"");
      o->no_decay.push_back(g->s);
    }
  }
  return object(o, a.call);
}

}  // namespace

int64_t TokenizerSpec::vocab() const {
  if (kind == "bytes") return 256;
  if (kind == "chars") {
    int64_t n = 0;
    for (unsigned char c : alphabet) n += (c & 0xC0) != 0x80;
    return n;
  }
  return file_vocab;
}

std::function<void(TokenizerSpec&)>& tokenizer_file_reader() {
  static std::function<void(TokenizerSpec&)> reader;
  return reader;
}

void register_spec_builtins(Interp& in) {
  in.builtin("chars", [](Interp&, Args& a) {
    a.expect(1, 1, {"unknown"});
    auto t = std::make_shared<TokenizerSpec>();
    t->kind = "chars";
    t->alphabet = arg_string(a, 0);
    if (t->alphabet.empty()) throw UserError(Code::EVAL_006, a.span_of(0), "`chars` expected a non-empty alphabet");
    if (ValueP u = a.get("unknown")) {
      if (u->kind != Kind::String) throw UserError(Code::EVAL_004, u->span, "`chars` expected `:unknown` as a string");
      t->unknown = u->s;
    }
    return object(t, a.call);
  });
  in.builtin("bpe", [](Interp&, Args& a) {
    a.expect(1, 1);
    auto t = std::make_shared<TokenizerSpec>();
    t->kind = "bpe";
    t->path = arg_string(a, 0);
    std::string dir;
    if (a.call.valid()) dir = std::filesystem::path(Sources::global().get(a.call.file).path).parent_path().string();
    t->resolved_path = t->path.rfind("s3://", 0) == 0 || dir.empty()
                           ? t->path
                           : (std::filesystem::path(dir) / t->path).lexically_normal().string();
    if (auto& read = tokenizer_file_reader()) {
      try {
        read(*t);
      } catch (UserError& e) {
        if (!e.first().span.valid()) e.first().span = a.span_of(0);
        throw;
      }
    }
    return object(t, a.call);
  });
  for (const char* kind : {"adamw", "adam", "sgd"})
    in.builtin(kind, [kind](Interp&, Args& a) { return make_optimizer(a, kind); });
  in.builtin("constant", [](Interp&, Args& a) {
    a.expect(1, 1);
    auto s = std::make_shared<ScheduleSpec>();
    s->kind = "constant";
    s->value = arg_number(a, 0);
    return object(s, a.call);
  });
  in.builtin("warmup-cosine", [](Interp&, Args& a) {
    a.expect(0, 0, {"peak", "warmup", "min"});
    require_kw(a, {"peak", "warmup"});
    auto s = std::make_shared<ScheduleSpec>();
    s->kind = "warmup-cosine";
    s->peak = kw_number(a, "peak", 0);
    s->warmup = kw_int(a, "warmup", 0, 0);
    s->min = kw_number(a, "min", 0);
    return object(s, a.call);
  });
  in.builtin("linear-decay", [](Interp&, Args& a) {
    a.expect(0, 0, {"from", "to"});
    require_kw(a, {"from", "to"});
    auto s = std::make_shared<ScheduleSpec>();
    s->kind = "linear-decay";
    s->from = kw_number(a, "from", 0);
    s->to = kw_number(a, "to", 0);
    return object(s, a.call);
  });
  in.builtin("vocab", [](Interp& in, Args& a) {
    a.expect(1, 1);
    auto* l = a[0]->object<LoaderDecl>();
    if (!l)
      throw UserError(Code::EVAL_004, a.span_of(0),
                      fmt::format("`vocab` expected a loader, found {}", type_name(*a[0])));
    finalize_loader(in, *l);
    if (l->vocab_size() < 0) {
      // A bpe tokenizer's size is in its tokenizer.json, which is read only when the data is.
      Span at = l->span;
      for (const auto& k : l->keys)
        if (k.key == "tokenizer") at = k.expr->span.valid() ? k.expr->span : k.key_span;
      UserError e(Code::DATA_040, at,
                  fmt::format("(vocab {}) expected a vocabulary size known at compile time, found a {} tokenizer, "
                              "whose size is known only once its file {} is read",
                              l->name, l->tokenizer->kind, l->tokenizer->path),
                  fmt::format("give the loader its vocabulary size: (defloader {} ... :vocab 50257)", l->name));
      e.first().notes.push_back("asked for by (vocab " + l->name + ") at " + Sources::global().where(a.call));
      throw e;
    }
    return integer(l->vocab_size(), a.call);
  });
}

}  // namespace sx
