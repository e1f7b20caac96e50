// The interpreter's statements: each one over its whole space, in order.
// Elementwise ops are the reference backend's own per-element functions
// (backend/ref/elementwise.h), in f32;
// reductions fold in row-major order from 0 (a single axis: ref's order).
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "backend/cuda/kir_interp_internal.h"
#include "backend/ref/elementwise.h"
#include "util/error.h"

namespace sx::cuda::kir {

using detail::Value;

namespace detail {

std::vector<int64_t> broadcast_map(const Shape& big, const Shape& small) {
  int64_t n = big.numel();
  std::vector<int64_t> out(static_cast<size_t>(n));
  auto ss = sx::strides(small);
  std::array<int64_t, kMaxRank> st{}, c{};
  for (int d = 0; d < big.rank; ++d) st[d] = small[d] == big[d] ? ss[d] : 0;
  int64_t at = 0;
  for (int64_t i = 0; i < n; ++i) {
    out[static_cast<size_t>(i)] = at;
    for (int d = big.rank - 1; d >= 0; --d) {
      at += st[d];
      if (++c[d] < big[d]) break;
      at -= st[d] * big[d];
      c[d] = 0;
    }
  }
  return out;
}

}  // namespace detail

namespace {

// Element k of `out` set from a double, as the statement's node dtype says.
void put(Value& out, int64_t k, double v, DType dtype) {
  if (out.type == RegType::f32)
    out.f[k] = static_cast<float>(v);
  else
    out.i[k] = dtype == DType::Bool ? v != 0 : ref::to_int(v);
}

Value make(RegType t, int64_t n) {
  Value v;
  v.type = t;
  if (t == RegType::f32)
    v.f.assign(static_cast<size_t>(n), 0.0f);
  else
    v.i.assign(static_cast<size_t>(n), 0);
  return v;
}

// The buffer offset of each element of an access's view, and whether the
// guard lets it read (ids not yet added).
void offsets(const Access& a, std::vector<int64_t>& off, std::vector<char>& inside) {
  int64_t n = a.view.numel();
  off.resize(static_cast<size_t>(n));
  inside.assign(static_cast<size_t>(n), 1);
  std::array<int64_t, kMaxRank> c{};
  int64_t at = a.offset;
  for (int64_t i = 0; i < n; ++i) {
    off[static_cast<size_t>(i)] = at;
    if (a.guard_axis >= 0) inside[static_cast<size_t>(i)] = c[a.guard_axis] >= a.lo && c[a.guard_axis] < a.hi;
    for (int d = a.view.rank - 1; d >= 0; --d) {
      at += a.stride[d];
      if (++c[d] < a.view[d]) break;
      at -= a.stride[d] * a.view[d];
      c[d] = 0;
    }
  }
}

class Run {
 public:
  Run(const Kernel& k, const std::vector<void*>& buffers, const std::vector<Scalar>& scalars)
      : k_(k), buffers_(buffers), scalars_(scalars), regs_(k.regs.size()) {
    SX_ASSERT(buffers.size() == k.buffers.size(), "kir: a launch with the wrong number of buffers");
  }

  void run() {
    for (const Stmt& s : k_.body) step(s);
  }

 private:
  const Shape& space(int s) const { return k_.spaces[s]; }
  int64_t numel(int s) const { return space(s).numel(); }

  // arg broadcast to space `sp`: the index into arg's values of each element of sp.
  const std::vector<int64_t>* map_to(Reg arg, int sp) {
    int from = k_.regs[arg].space;
    if (from == sp) return nullptr;
    return &cached(sp, from);
  }
  const std::vector<int64_t>& cached(int big, int small) {
    auto it = maps_.find({big, small});
    if (it == maps_.end())
      it = maps_.emplace(std::make_pair(big, small), detail::broadcast_map(space(big), space(small))).first;
    return it->second;
  }
  int64_t at(const std::vector<int64_t>* m, int64_t i) const { return m ? (*m)[static_cast<size_t>(i)] : i; }

  // The ids register's values checked against the access's limit.
  void check_ids(const Stmt& s) {
    const Value& ids = regs_[s.access.ids];
    for (size_t i = 0; i < ids.i.size(); ++i) {
      int64_t id = ids.i[i];
      if (id >= 0 && id < s.access.ids_limit) continue;
      throw user_error(Code::SHAPE_012, s.span, "{}: expected ids in [0, {}), found {} (element {} of the ids)",
                       op_name(s.op), s.access.ids_limit, id, ids_element(s, i));
    }
  }
  // Where element i of the ids register was loaded from (its index in the ids tensor).
  int64_t ids_element(const Stmt& s, size_t i) {
    for (const Stmt& d : k_.body)
      if (d.out == s.access.ids && d.kind == StmtKind::Load) {
        std::vector<int64_t> off;
        std::vector<char> inside;
        offsets(d.access, off, inside);
        return off[i];
      }
    return static_cast<int64_t>(i);
  }

  void load(const Stmt& s) {
    const Buffer& b = k_.buffers[s.access.buffer];
    const void* base = buffers_[s.access.buffer];
    Value v = make(k_.regs[s.out].type, numel(s.space));
    std::vector<int64_t> off;
    std::vector<char> inside;
    offsets(s.access, off, inside);
    if (s.access.ids != kNoReg) {
      check_ids(s);
      const Value& ids = regs_[s.access.ids];
      for (size_t i = 0; i < off.size(); ++i) off[i] += int64_t{ids.i[i]} * s.access.ids_stride;
    }
    const Value* other = s.args.empty() ? nullptr : &regs_[s.args[0]];
    for (size_t i = 0; i < off.size(); ++i) {
      double x = 0;
      if (!inside[i]) {
        x = other ? other->get(static_cast<int64_t>(i)) : 0.0;
      } else if (b.type == Type::f32) {
        x = static_cast<const float*>(base)[off[i]];
      } else if (b.type == Type::bf16) {
        x = from_bf16_bits(static_cast<const uint16_t*>(base)[off[i]]);
      } else {
        x = static_cast<const int32_t*>(base)[off[i]];
      }
      if (v.type == RegType::f32)
        v.f[i] = static_cast<float>(x);
      else
        v.i[i] = static_cast<int32_t>(x);
    }
    regs_[s.out] = std::move(v);
  }

  void store(const Stmt& s) {
    const Buffer& b = k_.buffers[s.access.buffer];
    void* base = buffers_[s.access.buffer];
    const Value& v = regs_[s.args[0]];
    const std::vector<int64_t>* m = map_to(s.args[0], s.space);
    std::vector<int64_t> off;
    std::vector<char> inside;
    offsets(s.access, off, inside);
    if (s.kind == StmtKind::ScatterAdd) {
      check_ids(s);
      const Value& ids = regs_[s.access.ids];
      int64_t n = b.shape.numel();
      if (b.type == Type::i32)
        std::memset(base, 0, static_cast<size_t>(n) * 4);
      else
        std::fill_n(static_cast<float*>(base), n, 0.0f);
      for (size_t i = 0; i < off.size(); ++i) {
        int64_t o = off[i] + int64_t{ids.i[i]} * s.access.ids_stride;
        int64_t k = at(m, static_cast<int64_t>(i));
        if (b.type == Type::i32)
          static_cast<int32_t*>(base)[o] += v.i[k];
        else
          static_cast<float*>(base)[o] += v.f[k];
      }
      return;
    }
    // A value of one element (a constant) stored over a larger view fills it.
    const size_t held = v.type == RegType::f32 ? v.f.size() : v.i.size();
    const bool fill = !m && held == 1 && off.size() > 1;
    SX_ASSERT(m || fill || held >= off.size(), "kir: a store of more elements than its value has");
    for (size_t i = 0; i < off.size(); ++i) {
      int64_t k = fill ? 0 : at(m, static_cast<int64_t>(i));
      if (b.type == Type::i32)
        static_cast<int32_t*>(base)[off[i]] = v.type == RegType::i32 ? v.i[k] : ref::to_int(v.f[k]);
      else if (b.type == Type::bf16)
        static_cast<uint16_t*>(base)[off[i]] = to_bf16_bits(static_cast<float>(v.get(k)));
      else
        static_cast<float*>(base)[off[i]] = v.type == RegType::f32 ? v.f[k] : static_cast<float>(v.i[k]);
    }
  }

  void elementwise(const Stmt& s) {
    int64_t n = numel(s.space);
    Value out = make(k_.regs[s.out].type, n);
    std::vector<const std::vector<int64_t>*> maps;
    for (Reg a : s.args) maps.push_back(map_to(a, s.space));
    const Value& a = regs_[s.args[0]];
    switch (s.kind) {
      case StmtKind::Unary:
        for (int64_t i = 0; i < n; ++i) {
          int64_t k = at(maps[0], i);
          if (s.op == Op::Cast)
            put(out, i, a.get(k), s.dtype);
          else if (a.type == RegType::f32)
            out.f[i] = ref::unary_float(s.op, a.f[k]);
          else
            out.i[i] = ref::unary_int(s.op, a.i[k]);
        }
        break;
      case StmtKind::Binary: {
        const Value& b = regs_[s.args[1]];
        const bool cmp = ref::is_comparison(s.op);
        for (int64_t i = 0; i < n; ++i) {
          int64_t ka = at(maps[0], i), kb = at(maps[1], i);
          if (cmp)
            out.i[i] = ref::compare(s.op, a.get(ka), b.get(kb));
          else if (out.type == RegType::f32)
            out.f[i] = ref::binary_float(s.op, a.f[ka], b.f[kb]);
          else
            out.i[i] = ref::binary_int(s.op, a.i[ka], b.i[kb]);
        }
        break;
      }
      case StmtKind::Select: {
        const Value &x = regs_[s.args[1]], &y = regs_[s.args[2]];
        for (int64_t i = 0; i < n; ++i) {
          bool c = a.get(at(maps[0], i)) != 0;
          const Value& pick = c ? x : y;
          int64_t k = at(maps[c ? 1 : 2], i);
          if (out.type == RegType::f32 && pick.type == RegType::f32)
            out.f[i] = pick.f[k];
          else
            put(out, i, pick.get(k), s.dtype);
        }
        break;
      }
      default:  // Expand
        for (int64_t i = 0; i < n; ++i) {
          if (out.type == RegType::f32)
            out.f[i] = a.f[at(maps[0], i)];
          else
            out.i[i] = a.i[at(maps[0], i)];
        }
        break;
    }
    regs_[s.out] = std::move(out);
  }

  void reduce(const Stmt& s) {
    const Value& x = regs_[s.args[0]];
    int from = k_.regs[s.args[0]].space;
    int64_t n = numel(from), outs = numel(s.space);
    const std::vector<int64_t>& m = cached(from, s.space);
    int64_t count = outs ? n / outs : 0;
    Value out = make(k_.regs[s.out].type, outs);
    std::vector<int64_t> seen(static_cast<size_t>(outs), 0);
    switch (s.op) {
      case Op::Sum:
      case Op::Mean: {
        if (x.type == RegType::i32) {
          std::vector<int64_t> acc(static_cast<size_t>(outs), 0);
          for (int64_t i = 0; i < n; ++i) acc[m[i]] += x.i[i];
          for (int64_t o = 0; o < outs; ++o)
            put(out, o, s.op == Op::Mean ? double(acc[o]) / double(count) : double(acc[o]), s.dtype);
        } else {
          std::vector<float> acc(static_cast<size_t>(outs), 0.0f);
          for (int64_t i = 0; i < n; ++i) acc[m[i]] += x.f[i];
          for (int64_t o = 0; o < outs; ++o)
            put(out, o, s.op == Op::Mean ? double(acc[o]) / double(count) : double(acc[o]), s.dtype);
        }
        break;
      }
      case Op::Max: {
        std::vector<double> best(static_cast<size_t>(outs), -std::numeric_limits<double>::infinity());
        for (int64_t i = 0; i < n; ++i) {
          double v = x.get(i);
          if (seen[m[i]]++ == 0 || v > best[m[i]]) best[m[i]] = v;
        }
        for (int64_t o = 0; o < outs; ++o) put(out, o, best[o], s.dtype);
        break;
      }
      case Op::Argmax: {
        std::vector<double> best(static_cast<size_t>(outs), 0);
        for (int64_t i = 0; i < n; ++i) {
          double v = x.get(i);
          int64_t j = seen[m[i]]++;
          if (j == 0 || v > best[m[i]]) best[m[i]] = v, out.i[m[i]] = static_cast<int32_t>(j);
        }
        break;
      }
      case Op::LogSumExp: {
        std::vector<float> mx(static_cast<size_t>(outs), -std::numeric_limits<float>::infinity()), acc(outs, 0.0f);
        for (int64_t i = 0; i < n; ++i) mx[m[i]] = x.f[i] > mx[m[i]] ? x.f[i] : mx[m[i]];
        for (int64_t i = 0; i < n; ++i)
          if (!std::isinf(mx[m[i]])) acc[m[i]] += std::exp(x.f[i] - mx[m[i]]);
        for (int64_t o = 0; o < outs; ++o) out.f[o] = std::isinf(mx[o]) ? mx[o] : mx[o] + std::log(acc[o]);
        break;
      }
      default:
        SX_ASSERT(false, "kir: not a reduction");
    }
    regs_[s.out] = std::move(out);
  }

  void step(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::Load:
        return load(s);
      case StmtKind::Const: {
        Value v = make(k_.regs[s.out].type, numel(s.space));
        for (int64_t i = 0; i < numel(s.space); ++i) put(v, i, s.value, s.dtype);
        regs_[s.out] = std::move(v);
        return;
      }
      case StmtKind::Iota: {
        Value v = make(RegType::i32, numel(s.space));
        std::vector<int64_t> off;
        std::vector<char> inside;
        offsets(s.access, off, inside);
        for (size_t i = 0; i < off.size(); ++i) v.i[i] = static_cast<int32_t>(off[i]);
        regs_[s.out] = std::move(v);
        return;
      }
      case StmtKind::Unary:
      case StmtKind::Binary:
      case StmtKind::Select:
      case StmtKind::Expand:
        return elementwise(s);
      case StmtKind::Reduce:
        return reduce(s);
      case StmtKind::Intrinsic:
        return detail::run_intrinsic(k_, s, regs_, scalars_);
      case StmtKind::Store:
      case StmtKind::ScatterAdd:
        return store(s);
    }
  }

  const Kernel& k_;
  const std::vector<void*>& buffers_;
  const std::vector<Scalar>& scalars_;
  std::vector<Value> regs_;
  std::map<std::pair<int, int>, std::vector<int64_t>> maps_;  // broadcast maps, by (big, small) space
};

}  // namespace

void interpret(const Kernel& k, const std::vector<void*>& buffers, const std::vector<Scalar>& scalars) {
  if (k.kind == LaunchKind::Optimizer) return interpret_optimizer(k, buffers, scalars);
  Run(k, buffers, scalars).run();
}

}  // namespace sx::cuda::kir
