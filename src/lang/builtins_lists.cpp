// List builtins. `nil` is the empty list everywhere. Each builtin that walks or
// builds a collection charges one unit of work per element.
#include <algorithm>

#include "lang/interp.h"

namespace sx {

namespace {

using Items = std::vector<ValueP>;

const ValueP& callable(const Args& a, size_t k) {
  const ValueP& f = a[k];
  if (!f->object<Closure>() && !f->object<Builtin>())
    throw UserError(
        Code::EVAL_004, a.span_of(k),
        fmt::format("`{}` expected a function as argument {}, found {}", a.fn_name, k + 1, type_name(*f)));
  return f;
}

// The shortest length of the lists at positions [from, size).
size_t shortest(const Args& a, size_t from) {
  size_t n = SIZE_MAX;
  for (size_t k = from; k < a.size(); ++k) n = std::min(n, arg_list(a, k).size());
  return n;
}

void charge(Interp& in, const Args& a, size_t n) { in.charge(static_cast<int64_t>(n), a.call); }

bool is_tensor(const ValueP& v) { return v->is(Kind::Object) && v->obj->type_name() == "tensor"; }

// Number of elements of (range a b step), clamped so that charging it cannot overflow.
int64_t range_count(int64_t a, int64_t b, int64_t step) {
  __int128 span = step > 0 ? static_cast<__int128>(b) - a : static_cast<__int128>(a) - b;
  __int128 s = step > 0 ? step : -static_cast<__int128>(step);
  if (span <= 0) return 0;
  return static_cast<int64_t>(std::min<__int128>((span + s - 1) / s, int64_t{1} << 62));
}

}  // namespace

void register_builtins_lists(Interp& in) {
  in.builtin("list", [](Interp&, Args& a) {
    a.expect(0, -1);
    return list(a.pos);
  });
  in.builtin("cons", [](Interp& in, Args& a) {
    a.expect(2, 2);
    const Items& xs = arg_list(a, 1);
    charge(in, a, xs.size());
    Items out{a[0]};
    out.insert(out.end(), xs.begin(), xs.end());
    return list(std::move(out));
  });
  in.builtin("first", [](Interp&, Args& a) {
    a.expect(1, 1);
    const Items& xs = arg_list(a, 0);
    return xs.empty() ? nil() : xs[0];
  });
  in.builtin("rest", [](Interp& in, Args& a) {
    a.expect(1, 1);
    const Items& xs = arg_list(a, 0);
    charge(in, a, xs.size());
    return list(xs.empty() ? Items{} : Items(xs.begin() + 1, xs.end()));
  });
  in.builtin("nth", [](Interp&, Args& a) {
    a.expect(2, 2);
    const Items& xs = arg_list(a, 0);
    int64_t i = arg_int(a, 1, "an integer index");
    if (i < 0 || static_cast<uint64_t>(i) >= xs.size())
      throw UserError(
          Code::EVAL_006, a.span_of(1),
          xs.empty() ? fmt::format("`{}` expected an index into a list, found index {} of an empty list",
                                   a.fn_name, i)
                     : fmt::format("`{}` expected an index from 0 to {} (the list's length is {}), found {}",
                                   a.fn_name, xs.size() - 1, xs.size(), i));
    return xs[static_cast<size_t>(i)];
  });
  in.builtin("len", [](Interp&, Args& a) {
    a.expect(1, 1);
    if (a[0]->is(Kind::String)) {  // code points
      int64_t n = 0;
      for (unsigned char c : a[0]->s) n += (c & 0xC0) != 0x80;
      return integer(n);
    }
    return integer(static_cast<int64_t>(arg_list(a, 0).size()));
  });
  in.builtin("append", [](Interp& in, Args& a) {
    a.expect(1, -1);
    Items out = arg_list(a, 0);
    out.insert(out.end(), a.pos.begin() + 1, a.pos.end());
    charge(in, a, out.size());
    return list(std::move(out));
  });
  in.builtin("concat", [](Interp& in, Args& a) {
    // Tensors: `(concat [a b] :axis k)` will trace a graph node here (a later issue).
    for (size_t k = 0; k < a.size(); ++k)
      if (a[k]->is(Kind::List) && std::any_of(a[k]->items.begin(), a[k]->items.end(), is_tensor))
        throw UserError(Code::EVAL_004, a.span_of(k),
                        fmt::format("`{}` expected lists of data, found a list of tensors", a.fn_name));
    a.expect(0, -1);
    Items out;
    for (size_t k = 0; k < a.size(); ++k) {
      const Items& xs = arg_list(a, k);
      charge(in, a, xs.size());
      out.insert(out.end(), xs.begin(), xs.end());
    }
    return list(std::move(out));
  });
  in.builtin("map", [](Interp& in, Args& a) {
    a.expect(2, -1);
    const ValueP& f = callable(a, 0);
    size_t n = shortest(a, 1);
    Items out;
    for (size_t i = 0; i < n; ++i) {
      charge(in, a, 1);
      Items args;
      for (size_t k = 1; k < a.size(); ++k) args.push_back(a[k]->items[i]);
      out.push_back(in.call(f, std::move(args), a.call));
    }
    return list(std::move(out));
  });
  in.builtin("filter", [](Interp& in, Args& a) {
    a.expect(2, 2);
    const ValueP& f = callable(a, 0);
    Items out;
    for (const auto& x : arg_list(a, 1)) {
      charge(in, a, 1);
      if (in.call(f, {x}, a.call)->truthy()) out.push_back(x);
    }
    return list(std::move(out));
  });
  // (reduce f init xs) or (reduce f xs), which starts from the first element.
  in.builtin("reduce", [](Interp& in, Args& a) {
    a.expect(2, 3);
    const ValueP& f = callable(a, 0);
    const Items& xs = arg_list(a, a.size() - 1);
    if (a.size() == 2 && xs.empty())
      throw UserError(
          Code::EVAL_006, a.span_of(1),
          fmt::format("`{}` expected a non-empty list or an initial value, found an empty list", a.fn_name),
          "give an initial value: (reduce f init xs)");
    ValueP acc = a.size() == 3 ? a[1] : xs[0];
    for (size_t i = a.size() == 3 ? 0 : 1; i < xs.size(); ++i) {
      charge(in, a, 1);
      acc = in.call(f, {acc, xs[i]}, a.call);
    }
    return acc;
  });
  // (range n), (range a b) or (range a b step): integers from a up to (not including) b.
  in.builtin("range", [](Interp& in, Args& a) {
    a.expect(1, 3);
    int64_t from = a.size() == 1 ? 0 : arg_int(a, 0);
    int64_t to = arg_int(a, a.size() == 1 ? 0 : 1);
    int64_t step = a.size() == 3 ? arg_int(a, 2) : 1;
    if (step == 0)
      throw UserError(Code::EVAL_006, a.span_of(2),
                      fmt::format("`{}` expected a nonzero step, found 0", a.fn_name));
    int64_t n = range_count(from, to, step);
    in.charge(n, a.call);  // before building, so that a huge range fails fast
    Items out;
    out.reserve(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      if ((k & 0xFFFF) == 0xFFFF) in.charge(0, a.call);  // a long build still sees a stopping signal
      out.push_back(integer(static_cast<int64_t>(from + static_cast<__int128>(k) * step)));
    }
    return list(std::move(out));
  });
  in.builtin("zip", [](Interp& in, Args& a) {
    a.expect(1, -1);
    size_t n = shortest(a, 0);
    charge(in, a, n);
    Items out;
    for (size_t i = 0; i < n; ++i) {
      Items tuple;
      for (const auto& xs : a.pos) tuple.push_back(xs->items[i]);
      out.push_back(list(std::move(tuple)));
    }
    return list(std::move(out));
  });
  in.builtin("reverse", [](Interp& in, Args& a) {
    a.expect(1, 1);
    const Items& xs = arg_list(a, 0);
    charge(in, a, xs.size());
    return list(Items(xs.rbegin(), xs.rend()));
  });
}

}  // namespace sx
