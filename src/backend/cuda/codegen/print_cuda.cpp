#include "backend/cuda/codegen/print_cuda.h"

#include <cmath>
#include <map>

#include "backend/cuda/codegen/prelude.h"
#include "backend/cuda/codegen/print_internal.h"

namespace sx::cuda::codegen {
namespace detail {

std::string f32_literal(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(f)) return "sx_nan()";
  if (std::isinf(f)) return f > 0 ? "(-sx_neg_inf())" : "sx_neg_inf()";
  return fmt::format("{:.9e}f", f);
}

const char* c_type(Type t) { return t == Type::f32 ? "float" : t == Type::bf16 ? "sx_bf16" : "int"; }

Shape unit_space(const Kernel& k) {
  Shape u = k.spaces[0];
  auto fold = [&](const Shape& from, const Shape& to) {
    for (int d = 0; d < u.rank; ++d) {
      int df = d - (u.rank - from.rank), dt = d - (u.rank - to.rank);
      int64_t nf = df >= 0 ? from[df] : 1, nt = dt >= 0 ? to[dt] : 1;
      if (nf > nt) u[d] = 1;
    }
  };
  for (const Stmt& s : k.body) {
    const Shape& space = k.spaces[s.space];
    if (s.kind == StmtKind::Reduce) fold(k.spaces[k.regs[s.args[0]].space], space);
    if (s.kind == StmtKind::ScatterAdd)
      for (int d = 0; d < u.rank; ++d) u[d] = 1;
    if (s.kind != StmtKind::Intrinsic || u.rank == 0) continue;
    switch (s.intrinsic) {
      case Intrinsic::Softmax:
      case Intrinsic::LogSoftmax: {
        int d = s.axis + (u.rank - space.rank);
        if (d >= 0 && d < u.rank) u[d] = 1;
        break;
      }
      case Intrinsic::LayerNorm:
      case Intrinsic::RmsNorm:
      case Intrinsic::CrossEntropyRow:
      case Intrinsic::AccuracyRow:
        u[u.rank - 1] = 1;  // one thread a row: the row's statistics once
        break;
      default:
        break;
    }
  }
  return u;
}

Printer::Printer(const Kernel& k) : k_(k), unit_(k.kind == LaunchKind::Optimizer ? Shape{} : unit_space(k)) {
  def_.assign(k.regs.size(), -1);
  for (size_t i = 0; i < k.body.size(); ++i)
    if (k.body[i].out != kNoReg) def_[k.body[i].out] = static_cast<int>(i);
}

std::string Printer::print() {
  std::string sig;
  for (const Buffer& b : k_.buffers)
    sig += fmt::format("{}{}{}* __restrict__ {}", sig.empty() ? "" : ", ", b.written ? "" : "const ", c_type(b.type),
                       b.name);
  // The scalars' words in device memory (gpu.h's scalar_words), read once a thread.
  std::string scalars;
  if (!k_.scalars.empty())
    sig += std::string(sig.empty() ? "" : ", ") + "const unsigned long long* __restrict__ sx_scalars";
  for (size_t i = 0; i < k_.scalars.size(); ++i) {
    const ScalarParam& s = k_.scalars[i];
    scalars +=
        s.type == ScalarType::u64 ? fmt::format("  const unsigned long long {} = sx_scalars[{}];\n", scalar_name(s), i)
        : s.type == ScalarType::f32
            ? fmt::format("  const float {} = __uint_as_float((unsigned)sx_scalars[{}]);\n", scalar_name(s), i)
            : fmt::format("  const double {} = __longlong_as_double((long long)sx_scalars[{}]);\n", scalar_name(s), i);
  }
  if (k_.kind == LaunchKind::Optimizer) return print_optimizer(k_, sig, scalars);
  std::string shape;
  for (int d = 0; d < unit_.rank; ++d) shape += (d ? "," : "") + std::to_string(unit_[d]);
  std::string out = fmt::format("// {} units [{}], each one thread's\nextern \"C\" __global__ void {}({}) {{\n{}",
                                unit_.numel(), shape, k_.name, sig, scalars);
  out += fmt::format(
      "  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < {}LL;\n"
      "       unit += (long long)gridDim.x * blockDim.x) {{\n",
      unit_.numel());
  unit_coords_.assign(unit_.rank, "0");
  std::string rest = "unit";
  for (int d = unit_.rank - 1; d >= 0; --d) {
    if (unit_[d] == 1) continue;
    unit_coords_[d] = "u" + std::to_string(d);
    frames_.own(0, unit_coords_[d]);
    frames_.line(0, fmt::format("long long {} = {} % {}LL;", unit_coords_[d], rest, unit_[d]));
    rest = fmt::format("({} / {}LL)", rest, unit_[d]);
  }
  for (const Stmt& s : k_.body) {
    if (s.kind == StmtKind::Store) store(s);
    if (s.kind == StmtKind::ScatterAdd) scatter_add(s);
  }
  out += frames_.code(0);
  out += "  }\n}\n";
  return out;
}

Coords Printer::broadcast(const Coords& c, const Shape& from, const Shape& to) {
  Coords out(to.rank, "0");
  for (int d = 0; d < to.rank; ++d) {
    int df = d + (from.rank - to.rank);
    if (to[d] != 1 && df >= 0) out[d] = c[df];
  }
  return out;
}

std::pair<std::string, int> Printer::loop(int parent, int64_t n) {
  int f = frames_.open(parent, "");
  std::string v = frames_.var(f, "i");
  frames_.set_header(f, fmt::format("for (long long {0} = 0; {0} < {1}LL; ++{0})", v, n));
  return {v, f};
}

int Printer::loops(int parent, const Shape& space, const std::vector<int>& axes, Coords& c) {
  int f = parent;
  for (int d : axes) {
    auto [v, inner] = loop(f, space[d]);
    c[d] = v;
    f = inner;
  }
  return f;
}

void Printer::close_loops(int inner, int outer) {
  while (inner != outer) {
    int parent = frames_.parent(inner);
    frames_.close(inner);
    inner = parent;
  }
}

std::string Printer::def(int f, const char* type, const std::string& expr) {
  std::string v = frames_.var(f, "v");
  frames_.line(f, fmt::format("{} {} = {};", type, v, expr));
  return v;
}

std::string Printer::address(int f, const Access& a, const Coords& c, const Shape& space, Coords* view) {
  bool same = a.view.rank == space.rank;
  for (int d = 0; same && d < space.rank; ++d) same = a.view[d] == space[d];
  Coords vc;
  if (same) {
    vc = c;
  } else {  // the element's linear index in its space, unravelled over the view
    std::string lin = "0LL";
    for (int d = 0; d < space.rank; ++d)
      if (space[d] != 1) lin = fmt::format("({} * {}LL + {})", lin, space[d], c[d]);
    std::string li = def(f, "long long", lin);
    vc.assign(a.view.rank, "0");
    for (int d = a.view.rank - 1; d >= 0; --d) {
      if (a.view[d] == 1) continue;
      vc[d] = def(f, "long long", fmt::format("{} % {}LL", li, a.view[d]));
      frames_.line(f, fmt::format("{0} = {0} / {1}LL;", li, a.view[d]));
    }
  }
  std::string addr = std::to_string(a.offset) + "LL";
  for (int d = 0; d < a.view.rank; ++d)
    if (a.stride[d] != 0 && vc[d] != "0") addr += fmt::format(" + {} * {}LL", vc[d], a.stride[d]);
  if (view) *view = vc;
  return addr;
}

std::string Printer::load_expr(const Buffer& b, const std::string& at, RegType want) const {
  std::string v = fmt::format("{}[{}]", b.name, at);
  if (b.type == Type::bf16) v = "sx_bf16_to_f32(" + v + ")";
  if (b.type == Type::i32 && want == RegType::f32) return "(float)" + v;
  if (b.type != Type::i32 && want == RegType::i32) return "sx_to_int(" + v + ")";
  return v;
}

std::string Printer::store_expr(const Buffer& b, const std::string& v, RegType have) const {
  if (b.type == Type::i32) return have == RegType::i32 ? v : "sx_to_int(" + v + ")";
  std::string f = have == RegType::f32 ? v : "(float)" + v;
  return b.type == Type::bf16 ? "sx_f32_to_bf16(" + f + ")" : f;
}

std::string Printer::value(Reg r, const Coords& c) {
  std::string key = std::to_string(r) + "@";
  for (const auto& x : c) key += x + ",";
  int f = frames_.deepest(c);
  if (const std::string* found = frames_.find(f, key)) return *found;
  std::string v = emit(k_.body[def_[r]], c, f);
  frames_.remember(f, key, v);
  return v;
}

std::string Printer::arg(const Stmt& s, size_t i, const Coords& c) {
  Reg a = s.args[i];
  return value(a, broadcast(c, k_.spaces[s.space], space_of(a)));
}

// A store of the statement's space from each unit: its coordinates are the
// unit's where the unit has the axis, loops where the unit folds it, and 0
// (stored by the unit at 0 only) where the space is 1 and the unit is not.
void Printer::store(const Stmt& s) {
  const Shape& space = k_.spaces[s.space];
  Coords c(space.rank, "0");
  std::vector<int> looped;
  std::string only;
  for (int d = 0; d < space.rank; ++d) {
    int du = d + (unit_.rank - space.rank);
    int64_t nu = du >= 0 ? unit_[du] : 1;
    if (space[d] > 1 && nu == space[d])
      c[d] = unit_coords_[du];
    else if (space[d] > 1)
      looped.push_back(d);
    if (nu > 1 && space[d] != nu) only += fmt::format("{}{} == 0", only.empty() ? "" : " && ", unit_coords_[du]);
  }
  int top = 0;
  if (!only.empty()) top = frames_.open(0, "if (" + only + ")");
  int inner = loops(top, space, looped, c);
  std::string v = arg(s, 0, c);
  const Buffer& b = k_.buffers[s.access.buffer];
  std::string at = address(inner, s.access, c, space, nullptr);
  frames_.line(inner, fmt::format("{}[{}] = {};", b.name, at, store_expr(b, v, k_.regs[s.args[0]].type)));
  close_loops(inner, 0);
}

// One thread (the unit space is a single unit): the buffer cleared, then
// every source element added in row-major order.
void Printer::scatter_add(const Stmt& s) {
  const Buffer& b = k_.buffers[s.access.buffer];
  if (zeroed_.insert(s.access.buffer).second) {
    auto [z, f] = loop(0, b.shape.numel());
    frames_.line(f, fmt::format("{}[{}] = {};", b.name, z, b.type == Type::bf16 ? "sx_f32_to_bf16(0.0f)" : "0"));
    frames_.close(f);
  }
  const Shape& space = k_.spaces[s.space];
  Coords c(space.rank, "0");
  std::vector<int> axes;
  for (int d = 0; d < space.rank; ++d)
    if (space[d] > 1) axes.push_back(d);
  int inner = loops(0, space, axes, c);
  std::string v = arg(s, 0, c);
  std::string at = address(inner, s.access, c, space, nullptr);
  std::string id = value(s.access.ids, broadcast(c, space, space_of(s.access.ids)));
  int body = frames_.open(inner, fmt::format("if ({0} >= 0 && {0} < {1}LL)", id, s.access.ids_limit));
  at = fmt::format("{} + (long long){} * {}LL", at, id, s.access.ids_stride);
  if (b.type == Type::bf16)
    frames_.line(body, fmt::format("{0}[{1}] = sx_f32_to_bf16(sx_bf16_to_f32({0}[{1}]) + {2});", b.name, at, v));
  else
    frames_.line(body, fmt::format("{}[{}] += {};", b.name, at, v));
  frames_.close(body);
  close_loops(inner, 0);
}

}  // namespace detail

std::string print_kernel(const kir::Kernel& k) { return detail::Printer(k).print(); }

int64_t kernel_units(const kir::Kernel& k) { return detail::unit_space(k).numel(); }

ProgramText print_program(const std::vector<const kir::Kernel*>& kernels) {
  ProgramText p;
  p.source = prelude_source();
  for (const kir::Kernel* k : kernels) {
    p.kernels.push_back(k->name);
    p.source += "\n" + print_kernel(*k);
  }
  return p;
}

std::vector<ProgramText> print_programs(const std::vector<const kir::Kernel*>& kernels, size_t per_program,
                                        std::vector<int>* program_of) {
  struct Part {
    std::map<std::string, std::string> text;  // by name
    std::vector<std::string> order;
  };
  std::vector<Part> parts;
  if (program_of) program_of->clear();
  for (const kir::Kernel* k : kernels) {
    std::string text = print_kernel(*k);
    int at = -1;
    for (size_t i = 0; i < parts.size() && at < 0; ++i) {
      auto it = parts[i].text.find(k->name);
      if (it != parts[i].text.end() ? it->second == text : parts[i].order.size() < per_program)
        at = static_cast<int>(i);
    }
    if (at < 0) {
      parts.emplace_back();
      at = static_cast<int>(parts.size()) - 1;
    }
    Part& part = parts[static_cast<size_t>(at)];
    if (part.text.emplace(k->name, text).second) part.order.push_back(k->name);
    if (program_of) program_of->push_back(at);
  }
  std::vector<ProgramText> out;
  for (const Part& part : parts) {
    ProgramText p;
    p.source = prelude_source();
    for (const std::string& name : part.order) p.source += "\n" + part.text.at(name), p.kernels.push_back(name);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace sx::cuda::codegen
