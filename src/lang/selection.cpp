#include "lang/selection.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "util/printable.h"

namespace sx {

std::string KnobDecl::type() const {
  if (!forced_type.empty()) return forced_type;
  switch (dflt ? dflt->kind : Kind::Nil) {
    case Kind::Int: return "integer";
    case Kind::Float: return "float";
    case Kind::String: return "string";
    case Kind::Symbol: return "symbol";
    case Kind::Bool: return "boolean";
    default: return "";
  }
}

void add_set(Selection& s, const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UserError(Code::KNOB_005, {}, fmt::format("--set expected KNOB=VALUE, found `{}`", text),
                    "write it as --set lr=3e-3");
  s.sets.emplace_back(text.substr(0, eq), text.substr(eq + 1));
}

std::vector<std::pair<std::string, std::string>> effective_sets(const Selection& s) {
  std::map<std::string, std::string> last;
  for (const auto& [k, v] : s.sets) last[k] = v;
  return {last.begin(), last.end()};
}

std::string describe_choices(const KnobDecl& k) {
  std::vector<std::string> cs;
  for (const auto& c : k.choices) cs.push_back(canonical(*c));
  return join_capped(cs, ", ");
}

namespace {

// "an integer", or for a run setting, whose range no declaration shows, "an
// integer of at least 1".
std::string type_phrase(const KnobDecl& k) {
  std::string type = k.type();
  std::string phrase = (type == "integer" ? "an " : "a ") + type;
  if (!k.forced_type.empty() && k.min && !k.max) phrase += " of at least " + canonical(*k.min);
  return phrase;
}

// What to write instead of an integer knob's `text`.
std::string integer_help(const std::string& text, bool overflow) {
  if (overflow) return "integers run from -9223372036854775808 to 9223372036854775807";
  double d = 0;
  const char* b = text.data();
  const char* e = b + text.size();
  auto r = std::from_chars(b + (b != e && *b == '+'), e, d);
  bool parsed = r.ec == std::errc() && r.ptr == e && std::isfinite(d);
  if (parsed && d == std::floor(d) && std::fabs(d) < 9.2e18 && text.find_first_of("eE") != std::string::npos)
    return fmt::format("write the integer in digits: {}", static_cast<int64_t>(d));
  if (text.find_first_of(".eE") != std::string::npos) return "an integer knob takes no fractional part";
  return "";
}

}  // namespace

ValueP parse_knob_value(const KnobDecl& k, const std::string& text, const std::string& source) {
  std::string type = k.type();
  auto wrong = [&](bool overflow = false) {
    return UserError(Code::KNOB_003, {},
                     fmt::format("{}: knob `{}` is {}, found `{}`", source, k.name, type_phrase(k), text),
                     type == "integer" ? integer_help(text, overflow) : "");
  };
  ValueP v;
  const char* b = text.data();
  const char* e = text.data() + text.size();
  if (type == "integer") {
    int64_t i = 0;
    auto r = std::from_chars(b + (b != e && *b == '+'), e, i);
    if (r.ec == std::errc::result_out_of_range && r.ptr == e) throw wrong(/*overflow=*/true);
    if (r.ec != std::errc() || r.ptr != e || text.empty()) throw wrong();
    v = integer(i);
  } else if (type == "float") {
    double d = 0;
    auto r = std::from_chars(b + (b != e && *b == '+'), e, d);
    if (r.ec != std::errc() || r.ptr != e || text.empty() || !std::isfinite(d)) throw wrong();
    v = floating(d);
  } else if (type == "boolean") {
    if (text != "true" && text != "false") throw wrong();
    v = boolean(text == "true");
  } else if (type == "symbol") {
    if (text.empty()) throw wrong();
    v = symbol(text);
  } else {
    v = string(text);
  }
  check_knob_value(k, v, {}, source);
  return v;
}

void check_knob_value(const KnobDecl& k, const ValueP& v, Span at, const std::string& source) {
  std::string type = k.type();
  bool ok = (type == "integer" && v->kind == Kind::Int) || (type == "float" && v->is_number()) ||
            (type == "string" && v->kind == Kind::String) || (type == "symbol" && v->kind == Kind::Symbol) ||
            (type == "boolean" && v->kind == Kind::Bool) || (v->kind == Kind::Nil && k.nullable);
  if (!ok)
    throw UserError(Code::KNOB_003, at,
                    fmt::format("{}: knob `{}` is {} {}, found {} `{}`", source, k.name, type == "integer" ? "an" : "a",
                                type, type_name(*v), repr(*v)));
  if (v->kind == Kind::Nil) return;
  if (!k.choices.empty() &&
      std::none_of(k.choices.begin(), k.choices.end(), [&](const ValueP& c) { return equal(*c, *v); }))
    throw UserError(Code::KNOB_004, at,
                    fmt::format("{}: knob `{}` is one of {}, found {}", source, k.name, describe_choices(k), canonical(*v)),
                    did_you_mean(canonical(*v), [&] {
                      std::vector<std::string> cs;
                      for (const auto& c : k.choices) cs.push_back(canonical(*c));
                      return cs;
                    }()));
  if (k.min && v->is_number() && v->as_double() < k.min->as_double())
    throw UserError(Code::KNOB_004, at,
                    fmt::format("{}: knob `{}` is at least {}, found {}", source, k.name, canonical(*k.min),
                                canonical(*v)));
  if (k.max && v->is_number() && v->as_double() > k.max->as_double())
    throw UserError(Code::KNOB_004, at,
                    fmt::format("{}: knob `{}` is at most {}, found {}", source, k.name, canonical(*k.max),
                                canonical(*v)));
}

std::string canonical(const Value& v) {
  switch (v.kind) {
    case Kind::Float: return format_float(v.f);
    case Kind::Nil: return "-";
    default: return display(v);
  }
}

std::string file_stem(const std::string& path) {
  auto slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  auto dot = base.rfind('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

std::string make_slug(const std::string& base, const std::string& variant,
                           const std::vector<std::pair<std::string, std::string>>& sets) {
  std::string slug = base;
  if (!variant.empty()) slug += "-" + variant;
  for (const auto& [k, v] : sets) slug += "-" + k + "=" + v;
  for (char& c : slug)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '=' || c == '-')) c = '_';
  return slug;
}

}  // namespace sx
