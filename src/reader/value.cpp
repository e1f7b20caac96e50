#include "reader/value.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace sx {

namespace {
std::shared_ptr<Value> make(Kind k, Span span) {
  auto v = std::make_shared<Value>();
  v->kind = k;
  v->span = span;
  return v;
}
}  // namespace

ValueP nil(Span span) {
  static const ValueP shared = make(Kind::Nil, {});
  if (!span.valid()) return shared;
  return make(Kind::Nil, span);
}
ValueP boolean(bool b, Span span) {
  auto v = make(Kind::Bool, span);
  v->b = b;
  return v;
}
ValueP integer(int64_t i, Span span) {
  auto v = make(Kind::Int, span);
  v->i = i;
  return v;
}
ValueP floating(double f, Span span) {
  auto v = make(Kind::Float, span);
  v->f = f;
  return v;
}
ValueP string(std::string s, Span span) {
  auto v = make(Kind::String, span);
  v->s = std::move(s);
  return v;
}
ValueP symbol(std::string name, Span span) {
  auto v = make(Kind::Symbol, span);
  v->s = std::move(name);
  return v;
}
ValueP keyword(std::string name, Span span) {
  auto v = make(Kind::Keyword, span);
  v->s = std::move(name);
  return v;
}
ValueP list(std::vector<ValueP> items, Span span, bool bracket) {
  auto v = make(Kind::List, span);
  v->items = std::move(items);
  v->bracket = bracket;
  return v;
}
ValueP object(std::shared_ptr<Object> o, Span span) {
  auto v = make(Kind::Object, span);
  v->obj = std::move(o);
  return v;
}
ValueP with_span(const ValueP& v, Span span) {
  auto c = std::make_shared<Value>(*v);
  c->span = span;
  return c;
}

std::string type_name(const Value& v) {
  switch (v.kind) {
    case Kind::Nil: return "nil";
    case Kind::Bool: return "boolean";
    case Kind::Int: return "integer";
    case Kind::Float: return "float";
    case Kind::String: return "string";
    case Kind::Symbol: return "symbol";
    case Kind::Keyword: return "keyword";
    case Kind::List: return "list";
    case Kind::Object: return v.obj->type_name();
  }
  return "?";
}

std::string format_float(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  double a = std::fabs(x);
  char buf[64];
  if (a >= 1e-6 && a < 1e21) {
    auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed);
    std::string s(buf, r.ptr);
    if (s.find('.') == std::string::npos) s += ".0";
    return s;
  }
  // Shortest round-trip digits in scientific form, exponent with two digits at
  // least ("1e-07"), as Python's repr writes it.
  auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string s(buf, r.ptr);
  auto e = s.find('e');
  std::string mant = s.substr(0, e);
  int exp = std::stoi(s.substr(e + 1));
  return fmt::format("{}e{}{:02d}", mant, exp < 0 ? "-" : "+", std::abs(exp));
}

namespace {
void escape_into(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  out += '"';
}

void print_into(std::string& out, const Value& v, bool quote_strings) {
  switch (v.kind) {
    case Kind::Nil: out += "nil"; return;
    case Kind::Bool: out += v.b ? "true" : "false"; return;
    case Kind::Int: out += std::to_string(v.i); return;
    case Kind::Float: out += format_float(v.f); return;
    case Kind::String:
      if (quote_strings) escape_into(out, v.s);
      else out += v.s;
      return;
    case Kind::Symbol: out += v.s; return;
    case Kind::Keyword: out += ':' + v.s; return;
    case Kind::List:
      out += v.bracket ? '[' : '(';
      for (size_t k = 0; k < v.items.size(); ++k) {
        if (k) out += ' ';
        print_into(out, *v.items[k], quote_strings);
      }
      out += v.bracket ? ']' : ')';
      return;
    case Kind::Object: out += v.obj->repr(); return;
  }
}
}  // namespace

std::string repr(const Value& v) {
  std::string out;
  print_into(out, v, true);
  return out;
}

std::string display(const Value& v) {
  std::string out;
  print_into(out, v, false);
  return out;
}

bool equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind == Kind::Int && b.kind == Kind::Int) return a.i == b.i;
    return a.as_double() == b.as_double();
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::Nil: return true;
    case Kind::Bool: return a.b == b.b;
    case Kind::String:
    case Kind::Symbol:
    case Kind::Keyword: return a.s == b.s;
    case Kind::List:
      if (a.items.size() != b.items.size()) return false;
      for (size_t k = 0; k < a.items.size(); ++k)
        if (!equal(*a.items[k], *b.items[k])) return false;
      return true;
    case Kind::Object: return a.obj == b.obj;
    default: return false;
  }
}

}  // namespace sx
