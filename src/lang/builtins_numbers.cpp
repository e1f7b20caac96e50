// Arithmetic, math, comparison and conversion builtins. Integers are int64 and
// never wrap (overflow is E-EVAL-006); any float operand makes a float result;
// compile-time floats are always finite.
#include <charconv>
#include <cmath>
#include <limits>

#include "lang/interp.h"

namespace sx {

namespace {

using Fn = std::function<ValueP(Interp&, Args&)>;

// The one place tensors enter arithmetic: a later issue makes this trace a graph node for `name`.
ValueP tensor_op(Interp&, const std::string& name, Args& a, size_t k) {
  throw UserError(Code::EVAL_004, a.span_of(k),
                  fmt::format("`{}` expected numbers, found {}", name, type_name(*a[k])));
}

// Registers an arithmetic or math builtin: an object operand (a tensor) goes to
// tensor_op; otherwise it takes [min, max] positional numbers and no keywords.
void numeric(Interp& in, const std::string& name, size_t min, long max, Fn fn) {
  in.builtin(name, [name, min, max, fn](Interp& in, Args& a) -> ValueP {
    for (size_t k = 0; k < a.size(); ++k)
      if (a[k]->is(Kind::Object)) return tensor_op(in, name, a, k);
    a.expect(min, max);
    for (size_t k = 0; k < a.size(); ++k) arg_number(a, k);
    return fn(in, a);
  });
}

bool all_int(const Args& a) {
  for (const auto& v : a.pos)
    if (!v->is(Kind::Int)) return false;
  return true;
}

UserError bad(const Args& a, Span at, const std::string& expected, const std::string& found) {
  return UserError(Code::EVAL_006, at, fmt::format("`{}` expected {}, found {}", a.fn_name, expected, found));
}

UserError overflow(const Args& a) {
  UserError e = bad(a, a.call, "a result that fits in a 64-bit integer", "an overflow");
  e.first().help = "use floats (such as 1.0) for values this large";
  return e;
}

// A float result, refused when not finite.
ValueP fnum(const Args& a, double x) {
  if (!std::isfinite(x)) throw bad(a, a.call, "a finite result", format_float(x));
  return floating(x);
}

// A float converted to an integer (after floor, ceil, round or truncation).
ValueP to_int(const Args& a, double x, size_t k) {
  if (!std::isfinite(x) || x < -9223372036854775808.0 || x >= 9223372036854775808.0)
    throw bad(a, a.span_of(k), "a value that fits in a 64-bit integer", format_float(x));
  return integer(static_cast<int64_t>(x));
}

// + - * over any number of operands; `-` of one operand negates.
ValueP fold(const Args& a, char op) {
  size_t from = (op == '-' && a.size() > 1) ? 1 : 0;
  if (all_int(a)) {
    int64_t acc = op == '*' ? 1 : from ? a[0]->i : 0;
    for (size_t k = from; k < a.size(); ++k) {
      int64_t x = a[k]->i;
      bool o = op == '+'   ? __builtin_add_overflow(acc, x, &acc)
               : op == '-' ? __builtin_sub_overflow(acc, x, &acc)
                           : __builtin_mul_overflow(acc, x, &acc);
      if (o) throw overflow(a);
    }
    return integer(acc);
  }
  double acc = op == '*' ? 1 : from ? a[0]->as_double() : 0;
  for (size_t k = from; k < a.size(); ++k) {
    double x = a[k]->as_double();
    acc = op == '+' ? acc + x : op == '-' ? acc - x : acc * x;
  }
  return fnum(a, acc);
}

void nonzero(const Args& a, size_t k) {
  if (a[k]->as_double() == 0) throw bad(a, a.span_of(k), "a nonzero divisor", repr(*a[k]));
}

int64_t ipow(const Args& a, int64_t base, int64_t e) {
  int64_t r = 1;
  while (e > 0) {
    if ((e & 1) && __builtin_mul_overflow(r, base, &r)) throw overflow(a);
    e >>= 1;
    if (e > 0 && __builtin_mul_overflow(base, base, &base)) throw overflow(a);
  }
  return r;
}

// Integers compare exactly, not through doubles.
bool less(const Value& x, const Value& y) {
  return x.is(Kind::Int) && y.is(Kind::Int) ? x.i < y.i : x.as_double() < y.as_double();
}

// Three-way comparison of two numbers or two strings, for < <= > >=.
int compare(const Args& a, size_t k) {
  const Value &x = *a[k], &y = *a[k + 1];
  if (x.is_number() && y.is_number()) return less(y, x) - less(x, y);
  if (x.is(Kind::String) && y.is(Kind::String)) return x.s.compare(y.s) < 0 ? -1 : x.s == y.s ? 0 : 1;
  bool first_bad = !x.is_number() && !x.is(Kind::String);
  throw UserError(Code::EVAL_004, a.span_of(first_bad ? k : k + 1),
                  fmt::format("`{}` expected two numbers or two strings, found {} and {}", a.fn_name,
                              type_name(x), type_name(y)));
}

void comparison(Interp& in, const std::string& name, bool (*ok)(int)) {
  in.builtin(name, [ok](Interp&, Args& a) {
    a.expect(1, -1);
    bool result = true;
    for (size_t k = 0; k + 1 < a.size(); ++k) result = ok(compare(a, k)) && result;  // every pair is checked
    return boolean(result);
  });
}

bool chained_equal(const Args& a) {
  for (size_t k = 0; k + 1 < a.size(); ++k)
    if (!equal(*a[k], *a[k + 1])) return false;
  return true;
}

}  // namespace

void register_builtins_numbers(Interp& in) {
  numeric(in, "+", 0, -1, [](Interp&, Args& a) { return fold(a, '+'); });
  numeric(in, "-", 1, -1, [](Interp&, Args& a) { return fold(a, '-'); });
  numeric(in, "*", 0, -1, [](Interp&, Args& a) { return fold(a, '*'); });
  numeric(in, "/", 1, -1, [](Interp&, Args& a) {
    if (a.size() == 1) return nonzero(a, 0), fnum(a, 1.0 / a[0]->as_double());
    double acc = a[0]->as_double();
    for (size_t k = 1; k < a.size(); ++k) nonzero(a, k), acc /= a[k]->as_double();
    return fnum(a, acc);
  });
  numeric(in, "quot", 2, 2, [](Interp&, Args& a) {
    int64_t x = arg_int(a, 0), y = arg_int(a, 1);
    nonzero(a, 1);
    if (x == std::numeric_limits<int64_t>::min() && y == -1) throw overflow(a);
    return integer(x / y);
  });
  numeric(in, "mod", 2, 2, [](Interp&, Args& a) {
    nonzero(a, 1);
    if (all_int(a)) {  // the result has the divisor's sign, as in Python
      int64_t x = a[0]->i, y = a[1]->i;
      if (y == -1) return integer(0);
      int64_t r = x % y;
      return integer(r != 0 && (r < 0) != (y < 0) ? r + y : r);
    }
    double x = a[0]->as_double(), y = a[1]->as_double(), r = std::fmod(x, y);
    return fnum(a, r != 0 && (r < 0) != (y < 0) ? r + y : r);
  });
  for (const char* name : {"min", "max"}) {
    bool is_min = name[1] == 'i';
    numeric(in, name, 1, -1, [is_min](Interp&, Args& a) {
      ValueP best = a[0];
      for (size_t k = 1; k < a.size(); ++k)
        if (is_min ? less(*a[k], *best) : less(*best, *a[k])) best = a[k];
      return best;
    });
  }
  numeric(in, "abs", 1, 1, [](Interp&, Args& a) {
    if (!a[0]->is(Kind::Int)) return floating(std::fabs(a[0]->f));
    if (a[0]->i == std::numeric_limits<int64_t>::min()) throw overflow(a);
    return integer(a[0]->i < 0 ? -a[0]->i : a[0]->i);
  });
  // Rounding gives integers; `round` rounds halves away from zero (2.5 -> 3, -2.5 -> -3).
  for (auto [name, f] : {std::pair<const char*, double (*)(double)>{"floor", std::floor},
                         {"ceil", std::ceil},
                         {"round", std::round}}) {
    double (*fn)(double) = f;  // clang 14 cannot capture a structured binding
    numeric(in, name, 1, 1,
            [fn](Interp&, Args& a) { return a[0]->is(Kind::Int) ? a[0] : to_int(a, fn(a[0]->f), 0); });
  }
  numeric(in, "sqrt", 1, 1, [](Interp&, Args& a) {
    if (a[0]->as_double() < 0) throw bad(a, a.span_of(0), "a number >= 0", repr(*a[0]));
    return fnum(a, std::sqrt(a[0]->as_double()));
  });
  numeric(in, "exp", 1, 1, [](Interp&, Args& a) { return fnum(a, std::exp(a[0]->as_double())); });
  numeric(in, "log", 1, 1, [](Interp&, Args& a) {
    if (a[0]->as_double() <= 0) throw bad(a, a.span_of(0), "a number > 0", repr(*a[0]));
    return fnum(a, std::log(a[0]->as_double()));
  });
  numeric(in, "pow", 2, 2, [](Interp&, Args& a) {
    if (all_int(a) && a[1]->i >= 0) return integer(ipow(a, a[0]->i, a[1]->i));
    return fnum(a, std::pow(a[0]->as_double(), a[1]->as_double()));
  });

  in.builtin("=", [](Interp&, Args& a) {
    a.expect(1, -1);
    return boolean(chained_equal(a));
  });
  in.builtin("!=", [](Interp&, Args& a) {
    a.expect(1, -1);
    return boolean(!chained_equal(a));
  });
  comparison(in, "<", [](int c) { return c < 0; });
  comparison(in, "<=", [](int c) { return c <= 0; });
  comparison(in, ">", [](int c) { return c > 0; });
  comparison(in, ">=", [](int c) { return c >= 0; });
  in.builtin("not", [](Interp&, Args& a) {
    a.expect(1, 1);
    return boolean(!a[0]->truthy());
  });

  // Conversions: `int` truncates toward zero and parses integer text; `float` parses any number text.
  in.builtin("int", [](Interp&, Args& a) -> ValueP {
    a.expect(1, 1);
    const Value& x = *a[0];
    if (x.is(Kind::Int)) return a[0];
    if (x.is(Kind::Float)) return to_int(a, std::trunc(x.f), 0);
    if (x.is(Kind::String)) {
      int64_t v = 0;
      auto [end, ec] = std::from_chars(x.s.data(), x.s.data() + x.s.size(), v);
      if (ec == std::errc() && end == x.s.data() + x.s.size()) return integer(v);
      throw bad(a, a.span_of(0), "integer text such as \"42\"", repr(x));
    }
    throw UserError(Code::EVAL_004, a.span_of(0),
                    fmt::format("`{}` expected a number or a string, found {}", a.fn_name, type_name(x)));
  });
  in.builtin("float", [](Interp&, Args& a) -> ValueP {
    a.expect(1, 1);
    const Value& x = *a[0];
    if (x.is_number()) return floating(x.as_double());
    if (x.is(Kind::String)) {
      double v = 0;
      auto [end, ec] = std::from_chars(x.s.data(), x.s.data() + x.s.size(), v);
      if (ec == std::errc() && end == x.s.data() + x.s.size() && std::isfinite(v)) return floating(v);
      throw bad(a, a.span_of(0), "finite number text such as \"0.5\"", repr(x));
    }
    throw UserError(Code::EVAL_004, a.span_of(0),
                    fmt::format("`{}` expected a number or a string, found {}", a.fn_name, type_name(x)));
  });
}

}  // namespace sx
