#pragma once
// The printer's state, shared by print_cuda.cpp (the kernel's frame, its
// units, stores, addresses) and print_stmt.cpp (each statement's CUDA).
#include <fmt/format.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "backend/cuda/codegen/print_frames.h"
#include "backend/cuda/kir.h"

namespace sx::cuda::codegen::detail {

using namespace kir;
using Coords = std::vector<std::string>;

std::string f32_literal(double v);
const char* c_type(Type t);
// A scalar parameter as printed: prefixed, so that no scalar's name (adam's
// "b1") can be a buffer's (b0, b1, ...).
inline std::string scalar_name(const ScalarParam& p) { return "s_" + p.name; }
// The unit space: the domain with each axis a statement folds set to 1.
Shape unit_space(const Kernel& k);
// The optimizer kernel (no body: kir.h's Optimizer), `signature` its parameters.
// `scalars`: the lines that read the kernel's scalars, first in its body.
std::string print_optimizer(const Kernel& k, const std::string& signature, const std::string& scalars);

class Printer {
 public:
  explicit Printer(const Kernel& k);
  std::string print();

 private:
  const Shape& space_of(Reg r) const { return k_.spaces[k_.regs[r].space]; }
  // Coordinates of `to` for an element at `c` of `from` (NumPy broadcasting:
  // right-aligned, a dimension of 1 reads coordinate 0).
  static Coords broadcast(const Coords& c, const Shape& from, const Shape& to);
  // A loop over [0, n) as a child frame of `parent`: its variable and frame.
  std::pair<std::string, int> loop(int parent, int64_t n);
  // Loops over `axes` of `space` (the first outermost) below `parent`,
  // setting c's coordinates; returns the innermost frame.
  int loops(int parent, const Shape& space, const std::vector<int>& axes, Coords& c);
  void close_loops(int inner, int outer);
  std::string def(int f, const char* type, const std::string& expr);
  // The element offset `a` addresses for coordinates c of `space`; `view`
  // (if not null) receives the view's coordinates, for a guard.
  std::string address(int f, const Access& a, const Coords& c, const Shape& space, Coords* view);
  std::string load_expr(const Buffer& b, const std::string& at, RegType want) const;
  std::string store_expr(const Buffer& b, const std::string& v, RegType have) const;

  // The value of register r at coordinates c of its space, printed once per
  // frame that needs it.
  std::string value(Reg r, const Coords& c);
  std::string arg(const Stmt& s, size_t i, const Coords& c);  // s.args[i] at c of s's space

  std::string emit(const Stmt& s, const Coords& c, int f);
  std::string emit_load(const Stmt& s, const Coords& c, int f);
  std::string emit_reduce(const Stmt& s, const Coords& c, int f);
  std::string emit_intrinsic(const Stmt& s, const Coords& c, int f);
  std::string emit_norm(const Stmt& s, const Coords& c, int f);
  std::string emit_row_loss(const Stmt& s, const Coords& c, int f);
  std::string emit_attention(const Stmt& s, const Coords& c, int f);
  void store(const Stmt& s);
  void scatter_add(const Stmt& s);

  const Kernel& k_;
  Shape unit_;
  Coords unit_coords_;
  std::vector<int> def_;  // the statement defining each register
  Frames frames_;
  std::set<int> zeroed_;  // scatter-add buffers already cleared
};

}  // namespace sx::cuda::codegen::detail
