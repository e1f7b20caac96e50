#pragma once
// The kernel IR: what one generated launch computes, as plain data that the
// interpreter (kir_interp.cpp, the emulated device) runs and the printer
// (codegen) turns into CUDA C++. One definition of every statement lives in
// each of the two; nothing else interprets a kernel.
//
// A kernel is
//   - its kind (the launch's) and its iteration structure: a list of index
//     spaces, the first of which is the domain (what the grid covers);
//   - its buffer parameters: global memory it reads or writes, each with a
//     storage type (f32, bf16, i32), a shape and what it holds (a graph value,
//     a parameter, its bf16 copy, a gradient, optimizer state);
//   - its scalar parameters (the step's dropout offset, the optimizer's
//     rates), passed by value at the launch;
//   - a body of statements in SSA over registers: each register is defined
//     once, holds one value per element of its space, and is f32 or i32.
//
// Statements run in order. Each one is defined for every element of its
// space at once (the interpreter runs a statement over the whole space
// before the next one; a CUDA kernel maps the domain onto threads and keeps
// per-row values in registers or shared memory). Elementwise statements
// broadcast their operands' spaces NumPy's way (spaces have one rank; a
// dimension of 1 stretches). Reductions fold, in a fixed order (row-major
// over the folded coordinates), the axes where the operand's space is
// larger than the result's; a row kernel's reductions fold the last axis,
// a column kernel's the others. No float atomics: a scatter-add sums each
// output element's contributions in the order of the source elements.
//
// Kinds and their structure:
//   Map        domain = the group's shape; elementwise statements, loads that
//              broadcast or read at other positions (slice, pad, concat,
//              permute, expand, copies of reshapes), dropout.
//   Row        domain = [..., C]; a prologue (elementwise on the domain),
//              reductions to the row space [..., 1] (the last axis folded),
//              an epilogue; row intrinsics (softmax, norms) fold the last axis.
//   Column     domain = the reduction's input; folds other axes (sum, mean,
//              max, sum-to), each output summed in the fixed order.
//   Gather     domain = the output; loads through an index register (embed,
//              gather), an elementwise epilogue.
//   Scatter    domain = the source (the gradient of gather/embed); a
//              deterministic ScatterAdd into a zeroed output.
//   Attention  one Attention intrinsic over q, k, v in their own spaces,
//              loads that fold operand permutes, stores that fold the output's.
//   Loss       a Row kernel whose rows end in a fixed-order mean to a scalar
//              (cross-entropy and accuracy rows); probabilities never stored.
//   Optimizer  no body: `optimizer` says the multi-tensor update (its one
//              definition per algorithm is runtime/optimizer.cpp's, bit for bit).
//
// bf16: a buffer is bf16 where the graph rounds (graph/precision.cpp, the
// round-bf16 nodes) and where a node is of dtype bf16: a store rounds to the
// nearest bf16 (ties to even), a load widens exactly. Registers are f32.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/cuda/lower.h"
#include "graph/graph.h"
#include "plan/plan.h"

namespace sx::cuda::kir {

// A buffer's element in memory. Bool values are stored as i32 0 or 1.
enum class Type : uint8_t { f32, bf16, i32 };
const char* type_name(Type t);  // "f32", "bf16", "i32"
inline int type_bytes(Type t) { return t == Type::bf16 ? 2 : 4; }

// A register holds f32 or i32 values (bf16 loads widen to f32).
enum class RegType : uint8_t { f32, i32 };

using Reg = uint32_t;
constexpr Reg kNoReg = UINT32_MAX;

// Where a buffer parameter's memory comes from, as the device binds it.
enum class Source : uint8_t {
  Value,           // the graph value of `node` (a launch's input or output; a parameter or feed node too)
  ParamCopy,       // the bf16 copy of parameter `path` (what a round-bf16 of a parameter reads)
  Param,           // parameter `path`'s f32 master weights (the optimizer)
  Gradient,        // the step's gradient of parameter `path` (the optimizer)
  OptimizerState,  // optimizer state by checkpoint name `path` ("adamw.m/<path>")
  Scratch,         // kernel-private memory of `shape` (the optimizer's norms)
};

struct Buffer {
  std::string name;  // the printer's parameter name: b0, b1, ...
  Source source = Source::Value;
  NodeId node = kNoNode;  // Source::Value: the value's node (views resolved)
  std::string path;       // the other sources
  Type type = Type::f32;
  Shape shape;  // contiguous row-major; accesses say how a space walks it
  bool read = false, written = false;
};

enum class ScalarType : uint8_t { u64, f32, f64 };
struct ScalarParam {
  std::string name;  // "rng_offset", "step_size", ...
  ScalarType type = ScalarType::f32;
};

// How a space's elements address a buffer. An element of the space at
// linear index i (row-major) has coordinates c = unravel(i, view); it
// addresses element offset + sum_d c[d] * stride[d] of the buffer (stride 0
// broadcasts). numel(view) == numel(space) always.
struct Access {
  int buffer = -1;  // index into Kernel::buffers
  Shape view;
  std::array<int64_t, kMaxRank> stride{};
  int64_t offset = 0;
  // Guarded (pad, concat): only coordinates c[guard_axis] in [lo, hi) read;
  // elsewhere a Load yields its `args[0]` (0 when it has none).
  int guard_axis = -1;
  int64_t lo = 0, hi = 0;
  // Indirect (gather, embed, scatter-add): + ids * ids_stride, where ids is
  // the i32 register `ids` (of the statement's space); an id outside
  // [0, ids_limit) is the user error E-SHAPE-012 (as the reference says it).
  Reg ids = kNoReg;
  int64_t ids_stride = 0, ids_limit = 0;
};

enum class StmtKind : uint8_t {
  Load,        // out = buffer at access (bf16 widened), guard/indirect as the access says
  Const,       // out = value (f32) or int(value) (i32)
  Iota,        // out (i32) = offset + sum_d c[d] * stride[d] over the access's view: arange read inline
  Unary,       // out = op(args[0]): an ops.def unary op; Cast converts to out's type (ref's rules)
  Binary,      // out = op(args[0], args[1]), spaces broadcast; comparisons give i32 0/1
  Select,      // out = args[0] != 0 ? args[1] : args[2] (where)
  Expand,      // out = args[0] broadcast to `space` (a row statistic expanded to its rows)
  Reduce,      // out = op (sum, mean, max, logsumexp, argmax) folding args[0]'s space down to `space`
  Intrinsic,   // out = a fused op (below)
  Store,       // buffer at access = args[0] (rounded for a bf16 buffer)
  ScatterAdd,  // buffer at access (indirect) += args[0], in the source elements' order; the buffer zeroed first
};

enum class Intrinsic : uint8_t {
  None,
  Softmax,          // args {x}: along `axis` of the space (ref's definition)
  LogSoftmax,       // args {x}: along `axis`
  LayerNorm,        // args {x, gain, bias}: over the last axis, eps = value, biased variance
  RmsNorm,          // args {x, gain}: over the last axis, eps = value
  CrossEntropyRow,  // args {logits (domain), target (i32, row space)}: out (row space) = logsumexp - logit[target]
  AccuracyRow,      // args {logits, target}: out (row space) = 1 when the first argmax is the target, else 0
  Dropout,          // args {x}: x * keep / (1 - p), p = value, Philox key `seed`, `stream`; element e = the
                    // linear index in `space`, offset = the kernel's scalar "rng_offset"
  Attention,        // args {q [..,tq,d], k [..,tk,d], v [..,tk,dv]}: out [..,tq,dv]; scale = value, `causal`
};

struct Stmt {
  StmtKind kind = StmtKind::Const;
  Reg out = kNoReg;  // the register defined (none for Store, ScatterAdd)
  int space = 0;     // of out (Store/ScatterAdd: of the value stored)
  Op op = Op::Full;  // Unary, Binary, Reduce: the ops.def op
  Intrinsic intrinsic = Intrinsic::None;
  std::vector<Reg> args;
  Access access;     // Load, Iota, Store, ScatterAdd
  double value = 0;  // Const; Intrinsic's eps, p or scale
  int axis = -1;     // Softmax, LogSoftmax: the axis of the space
  bool causal = false;
  uint64_t seed = 0;
  uint32_t stream = 0;
  NodeId node = kNoNode;     // the graph node it computes, for reports and the printer's comments
  DType dtype = DType::F32;  // that node's dtype (a Cast to bool keeps 0 or 1; where picks convert to it)
  Span span;                 // its .sx operation: an id out of range names it
};

struct RegInfo {
  RegType type = RegType::f32;
  int space = 0;
};

// The multi-tensor optimizer (Kind Optimizer), one launch per stage. The
// host computes the f32 scalars of runtime/optimizer.cpp from (k, lr) and
// passes them; the kernel does the per-element arithmetic of that file in
// the same order, so the update is bit for bit the CPU's.
struct OptimizerTensor {
  std::string path;
  int64_t elements = 0;
  bool decays = true;  // weight decay applies (not matched by :no-decay)
  // Buffer indices: the f32 master weights, the step's gradient, the state
  // (adam: m, v; sgd: momentum or -1), the bf16 copy products read (or -1).
  int param = -1, grad = -1, state0 = -1, state1 = -1, copy = -1;
};
struct Optimizer {
  enum class Algorithm : uint8_t { AdamW, Adam, Sgd } algorithm = Algorithm::AdamW;
  // GradNorm: each gradient's sum of squares in double, sequentially, into
  // Scratch buffer `norms` (one f64 per tensor, then the global norm).
  // Update: reads `norms` when clipping; coef = min(1, clip / (norm + 1e-6)).
  enum class Stage : uint8_t { GradNorm, Update } stage = Stage::Update;
  double clip = 0;  // 0: no clipping
  bool nesterov = false;
  int norms = -1;  // buffer index of the Scratch norms (f64 as two i32 words each), -1 without clipping
  std::vector<OptimizerTensor> tensors;
  // Update's scalars, in this order: adam(w): b1, b2, one_minus_b1,
  // one_minus_b2, bc2_sqrt, eps, step_size, decay_on, decay_off (the decay
  // factor for tensors that decay and for those that do not); sgd: wd, mom,
  // neg_lr, first (1.0 on step 1).
};

struct Kernel {
  LaunchKind kind = LaunchKind::Map;
  std::string name;           // the launch's
  std::vector<Shape> spaces;  // spaces[0] is the domain
  std::vector<Buffer> buffers;
  std::vector<ScalarParam> scalars;
  std::vector<RegInfo> regs;
  std::vector<Stmt> body;
  Optimizer optimizer;  // Kind Optimizer only
  int64_t grid = 1, block = 1;
};

// A generated launch (not cublas, not the optimizer) as a kernel.
Kernel build(const Graph& g, const plan::Plan& p, const Launch& l);

// The optimizer's kernel for one stage, its buffers bound by path.
struct OptimizerParams {
  Optimizer::Algorithm algorithm = Optimizer::Algorithm::AdamW;
  double clip = 0;
  bool nesterov = false, momentum = false;  // sgd: whether a momentum buffer exists
  bool bf16_copies = false;                 // write each parameter's bf16 copy after its update
  std::vector<OptimizerTensor> tensors;     // path, elements, decays (buffer indices filled in)
};
Kernel build_optimizer(const OptimizerParams& o, Optimizer::Stage stage, const std::string& name);

// A cuBLASLt call of a Gemm launch, in cuBLASLt's own (column-major) terms:
// D = alpha op(A) op(B) + beta C with C = D, m x n, strided batches, then
// the epilogue. The graph's row-major product X[m', n'] = P[m', k] Q[k, n']
// is D = X^T = Q^T P^T: A is the graph's b operand, B its a operand.
enum class GemmEpilogue : uint8_t {
  Default,
  Bias,         // + bias[m] (a graph bias of length n')
  Gelu,         // gelu(.)
  GeluAux,      // gelu(.), the pre-activation stored in aux
  GeluBias,     // gelu(. + bias)
  GeluAuxBias,  // gelu(. + bias), the pre-activation in aux
  DGelu,        // . * gelu'(aux): the gradient through a saved pre-activation
  BgradA,       // + writes bias_grad[m] = the sums of A over k (a graph bias gradient of b's rows)
};
enum class GemmCompute : uint8_t { f32, tf32, bf16 };  // bf16: bf16 operands, f32 accumulation

struct Gemm {
  bool trans_a = false, trans_b = false;  // op(A), op(B) in cuBLAS terms
  int64_t m = 0, n = 0, k = 0;            // D is m x n, column-major
  int64_t lda = 0, ldb = 0, ldd = 0;      // leading dimensions, elements
  int64_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_d = 0;  // elements between batches; 0: shared
  int64_t offset_a = 0, offset_b = 0, offset_d = 0;  // elements from the bound values' starts (a batch of a
                                                     // product that broadcasts some batch dimensions only)
  Type type_a = Type::f32, type_b = Type::f32, type_d = Type::f32;
  GemmCompute compute = GemmCompute::f32;
  float alpha = 1, beta = 0;
  GemmEpilogue epilogue = GemmEpilogue::Default;
  Type type_bias = Type::f32, type_aux = Type::f32;
  int64_t ld_aux = 0;
  // The graph values bound to the pointers (kNoNode: none). A parameter
  // node's bf16 round reads the parameter's copy (the device knows it).
  NodeId a = kNoNode, b = kNoNode, d = kNoNode, bias = kNoNode, aux = kNoNode, bias_grad = kNoNode;
};

// tf32: each operand rounded to 10 mantissa bits (to nearest, ties away
// from zero, as cvt.rna.tf32.f32) before an f32 product.

// The cuBLASLt calls of a Gemm launch: one per product (a grouped launch
// has several). Epilogue nodes the calls cannot give (an intermediate value
// another launch reads) come back in `rest` as a Map launch to run after
// them (build() makes its kernel); rest->nodes is empty when all fold.
std::vector<Gemm> build_gemms(const Graph& g, const plan::Plan& p, const Launch& l, Launch* rest);

}  // namespace sx::cuda::kir
