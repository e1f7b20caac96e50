#pragma once
// The Op enum and its tables, generated from ops.def (as Lua's lopcodes.h).
#include <cstdint>
#include <string_view>

namespace sx {

enum class Op : uint8_t {
#define SX_OP(name, str, arity, kind, meaning) name,
#include "graph/ops.def"
#undef SX_OP
};

// What shape of computation an op is; backends and passes group ops by it.
enum class OpKind : uint8_t { Leaf, Unary, Binary, Ternary, Matrix, Reduce, Shape, Fused, Control };

constexpr int kNumOps = 0
#define SX_OP(name, str, arity, kind, meaning) +1
#include "graph/ops.def"
#undef SX_OP
    ;

const char* op_name(Op op);  // "layer-norm"
int op_arity(Op op);         // -1: any number
OpKind op_kind(Op op);
const char* op_meaning(Op op);  // one line, for explain and docs
bool find_op(std::string_view name, Op* out);

}  // namespace sx
