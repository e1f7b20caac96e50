// Each kernel-IR statement as CUDA C++, with kir_interp's arithmetic: the
// same f32 operations in the same order (doubles where it uses doubles),
// reductions in row-major order of the folded coordinates.
#include "backend/cuda/codegen/print_internal.h"

namespace sx::cuda::codegen::detail {

namespace {

std::string unary_f(Op op, const std::string& x) {
  switch (op) {
    case Op::Neg:
      return "-" + x;
    case Op::Exp:
      return "expf(" + x + ")";
    case Op::Log:
      return "logf(" + x + ")";
    case Op::Sqrt:
      return "sqrtf(" + x + ")";
    case Op::Rsqrt:
      return "1.0f / sqrtf(" + x + ")";
    case Op::Sin:
      return "sinf(" + x + ")";
    case Op::Cos:
      return "cosf(" + x + ")";
    case Op::Tanh:
      return "tanhf(" + x + ")";
    case Op::Sigmoid:
      return "1.0f / (1.0f + expf(-" + x + "))";
    case Op::Relu:
      return fmt::format("({0} > 0.0f ? {0} : 0.0f)", x);
    case Op::Gelu:
      return "sx_gelu(" + x + ")";
    case Op::Silu:
      return fmt::format("{0} / (1.0f + expf(-{0}))", x);
    case Op::Abs:
      return "fabsf(" + x + ")";
    case Op::Sign:
      return fmt::format("(float)(({0} > 0.0f) - ({0} < 0.0f))", x);
    case Op::GeluGrad:
      return "sx_gelu_grad(" + x + ")";
    case Op::RoundBf16:
      return "sx_round_bf16(" + x + ")";
    default:
      SX_ASSERT(false, "codegen: not a float unary op");
  }
  return x;
}

std::string unary_i(Op op, const std::string& x) {
  switch (op) {
    case Op::Neg:
      return "(int)(-(long long)" + x + ")";
    case Op::Abs:
      return fmt::format("(int)((long long){0} < 0 ? -(long long){0} : (long long){0})", x);
    case Op::Sign:
      return fmt::format("(({0} > 0) - ({0} < 0))", x);
    case Op::Relu:
      return fmt::format("({0} > 0 ? {0} : 0)", x);
    default:
      SX_ASSERT(false, "codegen: not an integer unary op");
  }
  return x;
}

const char* comparison(Op op) {
  switch (op) {
    case Op::Eq:
      return "==";
    case Op::Ne:
      return "!=";
    case Op::Lt:
      return "<";
    case Op::Le:
      return "<=";
    case Op::Gt:
      return ">";
    case Op::Ge:
      return ">=";
    default:
      return nullptr;
  }
}

std::string binary(Op op, const std::string& a, const std::string& b, bool ints) {
  if (const char* cmp = comparison(op)) return fmt::format("(((double){} {} (double){}) ? 1 : 0)", a, cmp, b);
  if (ints) {
    switch (op) {
      case Op::Add:
        return fmt::format("(int)((long long){} + (long long){})", a, b);
      case Op::Sub:
        return fmt::format("(int)((long long){} - (long long){})", a, b);
      case Op::Mul:
        return fmt::format("(int)((long long){} * (long long){})", a, b);
      case Op::Maximum:
        return fmt::format("({0} >= {1} ? {0} : {1})", a, b);
      case Op::Minimum:
        return fmt::format("({0} <= {1} ? {0} : {1})", a, b);
      default:
        SX_ASSERT(false, "codegen: not an integer binary op");
    }
  }
  switch (op) {
    case Op::Add:
      return a + " + " + b;
    case Op::Sub:
      return a + " - " + b;
    case Op::Mul:
      return a + " * " + b;
    case Op::Div:
      return a + " / " + b;
    case Op::Pow:
      return "powf(" + a + ", " + b + ")";
    case Op::Maximum:
      return fmt::format("({0} >= {1} ? {0} : {1})", a, b);
    case Op::Minimum:
      return fmt::format("({0} <= {1} ? {0} : {1})", a, b);
    default:
      SX_ASSERT(false, "codegen: not a float binary op");
  }
  return a;
}

// A double converted to a register's type as the interpreter's `put` does.
std::string from_double(RegType t, const std::string& v) {
  return t == RegType::f32 ? "(float)(" + v + ")" : "sx_to_int(" + v + ")";
}

}  // namespace

std::string Printer::emit(const Stmt& s, const Coords& c, int f) {
  RegType t = k_.regs[s.out].type;
  const char* type = t == RegType::f32 ? "float" : "int";
  switch (s.kind) {
    case StmtKind::Load:
      return emit_load(s, c, f);
    case StmtKind::Const:
      return def(f, type, t == RegType::f32 ? f32_literal(s.value) : fmt::format("sx_to_int({:.17g})", s.value));
    case StmtKind::Iota: {
      std::string at = address(f, s.access, c, k_.spaces[s.space], nullptr);
      return def(f, type, "(int)(" + at + ")");
    }
    case StmtKind::Unary: {
      std::string x = arg(s, 0, c);
      RegType in = k_.regs[s.args[0]].type;
      if (s.op == Op::Cast)
        return def(f, type, t == RegType::f32 ? "(float)" + x : (in == RegType::i32 ? x : "sx_to_int(" + x + ")"));
      return def(f, type, in == RegType::f32 ? unary_f(s.op, x) : unary_i(s.op, x));
    }
    case StmtKind::Binary: {
      std::string a = arg(s, 0, c), b = arg(s, 1, c);
      bool ints = k_.regs[s.args[0]].type == RegType::i32;
      return def(f, type, binary(s.op, a, b, ints));
    }
    case StmtKind::Select: {
      // Each branch computed where its value is needed: the unpicked one
      // may be out of range (a guarded load), as in the interpreter.
      std::string cond = arg(s, 0, c), a = arg(s, 1, c), b = arg(s, 2, c);
      auto as = [&](size_t i, const std::string& v) {
        return k_.regs[s.args[i]].type == t ? v : (t == RegType::f32 ? "(float)" + v : "sx_to_int(" + v + ")");
      };
      return def(f, type, fmt::format("{} != 0 ? {} : {}", cond, as(1, a), as(2, b)));
    }
    case StmtKind::Expand:
      return arg(s, 0, c);
    case StmtKind::Reduce:
      return emit_reduce(s, c, f);
    case StmtKind::Intrinsic:
      return emit_intrinsic(s, c, f);
    default:
      SX_ASSERT(false, "codegen: a store has no value");
  }
  return "";
}

std::string Printer::emit_load(const Stmt& s, const Coords& c, int f) {
  RegType t = k_.regs[s.out].type;
  const Buffer& b = k_.buffers[s.access.buffer];
  const Access& a = s.access;
  Coords view;
  std::string at = address(f, a, c, k_.spaces[s.space], &view);
  std::string ok;
  if (a.guard_axis >= 0) {
    const std::string& g = view[a.guard_axis];
    ok = fmt::format("{0} >= {1}LL && {0} < {2}LL", g, a.lo, a.hi);
  }
  if (a.ids != kNoReg) {
    std::string id = value(a.ids, broadcast(c, k_.spaces[s.space], space_of(a.ids)));
    ok += fmt::format("{}{} >= 0 && {} < {}LL", ok.empty() ? "" : " && ", id, id, a.ids_limit);
    at = fmt::format("{} + (long long){} * {}LL", at, id, a.ids_stride);
  }
  std::string v = load_expr(b, at, t);
  if (ok.empty()) return def(f, t == RegType::f32 ? "float" : "int", v);
  // Outside the guard: args[0] (pad's and concat's other value) or 0; an id
  // out of range reads NaN (the interpreter's E-SHAPE-012; a kernel cannot throw).
  std::string other = s.args.empty() ? (t == RegType::f32 ? "0.0f" : "0") : arg(s, 0, c);
  if (a.ids != kNoReg && a.guard_axis < 0 && t == RegType::f32) other = "sx_nan()";
  return def(f, t == RegType::f32 ? "float" : "int", fmt::format("({}) ? {} : {}", ok, v, other));
}

// Folds the axes where the operand's space is larger than the result's,
// row-major, in one thread.
std::string Printer::emit_reduce(const Stmt& s, const Coords& c, int f) {
  RegType t = k_.regs[s.out].type;
  const Shape& from = space_of(s.args[0]);
  Coords xc = broadcast(c, k_.spaces[s.space], from);
  std::vector<int> folded;
  const Shape& to = k_.spaces[s.space];
  for (int d = 0; d < from.rank; ++d) {
    int dt = d - (from.rank - to.rank);
    if (from[d] > (dt >= 0 ? to[dt] : 1)) folded.push_back(d);
  }
  int64_t count = 1;
  for (int d : folded) count *= from[d];
  bool ints = k_.regs[s.args[0]].type == RegType::i32;
  auto fold = [&](const std::function<void(int, const std::string&)>& body) {
    Coords lc = xc;
    int inner = loops(f, from, folded, lc);
    body(inner, value(s.args[0], lc));
    close_loops(inner, f);
  };
  switch (s.op) {
    case Op::Sum:
    case Op::Mean: {
      std::string acc = def(f, ints ? "long long" : "float", ints ? "0" : "0.0f");
      fold([&](int in, const std::string& x) { frames_.line(in, fmt::format("{} += {};", acc, x)); });
      std::string total = s.op == Op::Mean ? fmt::format("(double){} / (double){}", acc, count) : "(double)" + acc;
      if (!ints && s.op == Op::Sum && t == RegType::f32) return acc;
      return def(f, t == RegType::f32 ? "float" : "int", from_double(t, total));
    }
    case Op::Max: {
      std::string best = def(f, "double", "0.0"), seen = def(f, "bool", "false");
      fold([&](int in, const std::string& x) {
        frames_.line(in, fmt::format("if (!{1} || (double){2} > {0}) {0} = (double){2};", best, seen, x));
        frames_.line(in, seen + " = true;");
      });
      return def(f, t == RegType::f32 ? "float" : "int", from_double(t, best));
    }
    case Op::Argmax: {
      std::string best = def(f, "double", "0.0"), j = def(f, "long long", "0"), at = def(f, "long long", "0");
      fold([&](int in, const std::string& x) {
        frames_.line(
            in, fmt::format("if ({1} == 0 || (double){3} > {0}) {{ {0} = (double){3}; {2} = {1}; }}", best, j, at, x));
        frames_.line(in, "++" + j + ";");
      });
      return def(f, "int", "(int)" + at);
    }
    case Op::LogSumExp: {
      std::string mx = def(f, "float", "sx_neg_inf()"), acc = def(f, "float", "0.0f");
      fold([&](int in, const std::string& x) { frames_.line(in, fmt::format("{0} = {1} > {0} ? {1} : {0};", mx, x)); });
      fold([&](int in, const std::string& x) {
        frames_.line(in, fmt::format("if (!sx_isinf({0})) {1} += expf({2} - {0});", mx, acc, x));
      });
      return def(f, "float", fmt::format("sx_isinf({0}) ? {0} : {0} + logf({1})", mx, acc));
    }
    default:
      SX_ASSERT(false, "codegen: not a reduction");
  }
  return "";
}

}  // namespace sx::cuda::codegen::detail
