// String builtins, `error` and `print`.
#include <cstdio>

#include "lang/interp.h"
#include "util/printable.h"

namespace sx {

namespace {

// The displays of the positionals from `from` on, concatenated (strings raw, floats as format_float).
std::string concat_displays(const Args& a, size_t from, const char* sep = "") {
  std::string out;
  for (size_t k = from; k < a.size(); ++k) out += (k > from ? sep : "") + display(*a[k]);
  return out;
}

// A name for symbol/keyword: from a string, symbol or keyword, not empty.
std::string name_arg(const Args& a, bool is_keyword) {
  a.expect(1, 1);
  const Value& x = *a[0];
  if (!x.is(Kind::String) && !x.is(Kind::Symbol) && !x.is(Kind::Keyword))
    throw UserError(Code::EVAL_004, a.span_of(0),
                    fmt::format("`{}` expected a string, found {}", a.fn_name, type_name(x)));
  std::string s = x.s;
  if (is_keyword && !s.empty() && s[0] == ':') s.erase(0, 1);
  if (s.empty())
    throw UserError(Code::EVAL_006, a.span_of(0),
                    fmt::format("`{}` expected a non-empty name, found \"\"", a.fn_name));
  return s;
}

// (format "layer {} of {}" i n): each {} takes the next argument's display; {{ and }} are braces.
std::string format_text(const Args& a) {
  const std::string& f = arg_string(a, 0);
  std::vector<std::string> pieces{""};  // text between placeholders
  for (size_t i = 0; i < f.size(); ++i) {
    char c = f[i], next = i + 1 < f.size() ? f[i + 1] : '\0';
    if ((c == '{' || c == '}') && next == c) {
      pieces.back() += c;
      ++i;
    } else if (c == '{' && next == '}') {
      pieces.emplace_back();
      ++i;
    } else if (c == '{' || c == '}') {
      throw UserError(
          Code::EVAL_006, a.span_of(0),
          fmt::format("`{}` expected `{{}}` placeholders and `{{{{`/`}}}}` for literal braces, found a "
                      "lone `{}` at offset {} of the format string",
                      a.fn_name, c, i));
    } else {
      pieces.back() += c;
    }
  }
  size_t want = pieces.size() - 1, given = a.size() - 1;
  if (want != given)
    throw UserError(
        Code::EVAL_003, a.call,
        fmt::format("`{}` expected {} argument{} after the format string (one per `{{}}`), found {}",
                    a.fn_name, want, want == 1 ? "" : "s", given));
  std::string out = pieces[0];
  for (size_t k = 0; k < want; ++k) out += display(*a[k + 1]) + pieces[k + 1];
  return out;
}

}  // namespace

void register_builtins_strings(Interp& in) {
  in.builtin("str", [](Interp&, Args& a) {
    a.expect(0, -1);
    return string(concat_displays(a, 0));
  });
  in.builtin("format", [](Interp&, Args& a) {
    a.expect(1, -1);
    return string(format_text(a));
  });
  in.builtin("symbol", [](Interp&, Args& a) { return symbol(name_arg(a, false)); });
  in.builtin("keyword", [](Interp&, Args& a) { return keyword(name_arg(a, true)); });
  // (error "message" x ...): stops compilation with E-EVAL-008 at the call; the message is (str "message" x
  // ...).
  in.builtin("error", [](Interp& in, Args& a) -> ValueP {
    a.expect(1, -1);
    throw in.error_here(Code::EVAL_008, a.call, concat_displays(a, 0));
  });
  // (print x ...): "print: x ..." on standard error, at compile time; returns nil.
  in.builtin("print", [](Interp&, Args& a) {
    a.expect(0, -1);
    std::string line = one_line("print: " + concat_displays(a, 0, " ") + "\n");
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
    return nil();
  });
}

}  // namespace sx
