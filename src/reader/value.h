#pragma once
// The one datum type. The reader makes Values from text (code is data), the
// evaluator computes with them, and macros build code out of them. Read values
// carry the Span of the text they came from.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "util/source.h"

namespace sx {

struct Value;
using ValueP = std::shared_ptr<const Value>;

// Anything that is not plain data: functions, macros, declarations, tensors.
// Later stages subclass it.
struct Object {
  virtual ~Object() = default;
  virtual std::string type_name() const = 0;  // "function", "loader", "tensor"
  virtual std::string repr() const { return "#<" + type_name() + ">"; }
};

enum class Kind : uint8_t { Nil, Bool, Int, Float, String, Symbol, Keyword, List, Object };

struct Value {
  Kind kind = Kind::Nil;
  bool bracket = false;  // a list written [ ... ]: evaluated element-wise, not called
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;                  // String text; Symbol and Keyword name (keyword without ':')
  std::vector<ValueP> items;      // List elements
  std::shared_ptr<Object> obj;    // Object
  Span span;

  bool is(Kind k) const { return kind == k; }
  bool is_symbol(std::string_view name) const { return kind == Kind::Symbol && s == name; }
  bool is_number() const { return kind == Kind::Int || kind == Kind::Float; }
  bool truthy() const { return !(kind == Kind::Nil || (kind == Kind::Bool && !b)); }
  double as_double() const { return kind == Kind::Int ? static_cast<double>(i) : f; }
  template <typename T>
  T* object() const { return kind == Kind::Object ? dynamic_cast<T*>(obj.get()) : nullptr; }
};

// Constructors. `span` is where the value came from, when it came from text.
ValueP nil(Span span = {});
ValueP boolean(bool b, Span span = {});
ValueP integer(int64_t i, Span span = {});
ValueP floating(double f, Span span = {});
ValueP string(std::string s, Span span = {});
ValueP symbol(std::string name, Span span = {});
ValueP keyword(std::string name, Span span = {});
ValueP list(std::vector<ValueP> items, Span span = {}, bool bracket = false);
ValueP object(std::shared_ptr<Object> o, Span span = {});
ValueP with_span(const ValueP& v, Span span);  // a copy of v at another position

// The type as users name it in messages: "integer", "float", "string", "symbol",
// "keyword", "list", "nil", "boolean", or the object's own type name.
std::string type_name(const Value& v);
// Printed as it would be read back (strings quoted); `display` prints strings raw.
std::string repr(const Value& v);
std::string display(const Value& v);
// Structural equality of data; objects by identity. Int 1 equals Float 1.0.
bool equal(const Value& a, const Value& b);

// Floats as the slug and the manifest print them: the shortest text that reads
// back to the same double, plain notation with at least one fractional digit
// for 1e-6 <= |x| < 1e21 ("0.003", "1.0"), exponent form otherwise ("1e-07").
std::string format_float(double x);

}  // namespace sx
