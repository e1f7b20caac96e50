#include "graph/op.h"

namespace sx {

namespace {
struct OpInfo {
  const char* name;
  int arity;
  OpKind kind;
  const char* meaning;
};
constexpr OpInfo kOps[] = {
#define SX_OP(name, str, arity, kind, meaning) {str, arity, OpKind::kind, meaning},
#include "graph/ops.def"
#undef SX_OP
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == kNumOps);
}  // namespace

const char* op_name(Op op) { return kOps[static_cast<int>(op)].name; }
int op_arity(Op op) { return kOps[static_cast<int>(op)].arity; }
OpKind op_kind(Op op) { return kOps[static_cast<int>(op)].kind; }
const char* op_meaning(Op op) { return kOps[static_cast<int>(op)].meaning; }

bool find_op(std::string_view name, Op* out) {
  for (int i = 0; i < kNumOps; ++i)
    if (name == kOps[i].name) {
      *out = static_cast<Op>(i);
      return true;
    }
  return false;
}

}  // namespace sx
