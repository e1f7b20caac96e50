#pragma once
// The CUDA lowering: a planned step graph grouped into launches. Matrix
// products become GEMM descriptors for cuBLASLt (transposes folded into
// flags, bias and GELU epilogues); every other group of nodes becomes one
// generated kernel described by its kind, its iteration domain and the nodes
// it covers in schedule order. Plain C++, no CUDA headers: `explain --device
// cuda` lowers on any machine. Deterministic: the same graph and plan give
// the same launches (no hash maps, no pointers in names).
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "plan/plan.h"

namespace sx::cuda {

enum class Precision : uint8_t { f32, tf32, bf16 };
// "f32", "tf32", "bf16"; false when the text names none of them.
bool parse_precision(const std::string& text, Precision* out);
const char* precision_name(Precision p);

enum class LaunchKind : uint8_t {
  Gemm,       // cuBLASLt matmul
  Map,        // elementwise over one domain, inputs broadcast, index ops reading outside values
  Row,        // reductions along the last axis with prologue and epilogue (softmax, norms, their gradients)
  Column,     // reductions over other axes, each output summed in a fixed order
  Gather,     // rows picked by ids, with an elementwise epilogue
  Scatter,    // deterministic scatter-add: ids sorted, each output row summed by one block in order
  Attention,  // fused attention forward
  Loss,       // cross-entropy / accuracy rows and their fixed-order mean
  Optimizer,  // every parameter's update in one multi-tensor launch
};
const char* launch_kind_name(LaunchKind k);

// What cuBLASLt does to the product before storing it: add a bias, GELU
// (the pre-activation kept), multiply by GELU's derivative of a saved
// pre-activation (backward), and/or write B's column sums (a bias gradient).
enum class Epilogue : uint8_t { None, Bias, Gelu, BiasGelu, DGelu };

// The fusion rules: each a way the lowering puts nodes into one launch (or
// into none), in the order llm.c shows they pay. Every launch says which
// rules made it (Launch::rules); the table below names each one, and the
// lowering's tests have a case per entry.
enum class FusionRule : uint8_t {
  InlineConstant,     // full, arange and elementwise functions of them: recomputed where read, no launch
  ParamBf16Copy,      // a parameter's round-bf16 is its bf16 copy, written by the optimizer: no launch
  ElementwiseChain,   // elementwise ops over one domain: one map
  ProducerPrologue,   // a reader's launch takes in an elementwise producer of its domain not read elsewhere
  RowPrologue,        // elementwise work before a row reduction of its rows (a residual add, then layer norm)
  RowEpilogue,        // elementwise work on a row kernel's rows or its row statistics after it
  RowChain,           // row reductions of the same rows one after another (a norm's backward)
  SharedRows,         // two readers of the same rows in one row kernel (cross-entropy and its gradient's softmax)
  ColumnPrologue,     // elementwise work before a column reduction or a scatter-add of its values
  SideBySideColumns,  // column reductions of one domain side by side (a norm's gain and bias gradients; q, k, v's bias
                      // gradients)
  GemmBias,           // the bias add in the GEMM's epilogue
  GemmGelu,           // GELU in the GEMM's epilogue (the pre-activation kept when read)
  GemmDGelu,          // the product times gelu'(a saved pre-activation) in the GEMM's epilogue
  GemmBf16Out,        // the product stored rounded to bf16
  GemmBiasGrad,       // a bias gradient as the weight-gradient GEMM's column sums (BGRADB)
  SiblingProducts,    // products of one operand and one shape as one grouped call (q, k and v; their weight gradients)
  AttentionLayout,    // attention reads q, k, v through their permutes, stores its output permuted and rounded
  GatherEpilogue,     // elementwise work after a gather or an embed
  LateElementwise,    // an elementwise function of a launch's own values joins it after others read it
};
struct FusionRuleInfo {
  FusionRule rule;
  const char* name;  // "gemm-bias"
};
const std::vector<FusionRuleInfo>& fusion_rules();
const char* fusion_rule_name(FusionRule r);

struct GemmDesc {
  bool trans_a = false, trans_b = false;  // operand read transposed (a folded permute)
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int64_t grouped = 1;       // products sharing operand a and shapes, one batched call with pointer arrays
  bool broadcast_b = false;  // b shared by every batch (a weight): stride 0
  Epilogue epilogue = Epilogue::None;
  NodeId bias = kNoNode;
  NodeId bias_grad = kNoNode;          // the column sums of B written beside the product (BGRADB)
  Precision compute = Precision::f32;  // tf32: matrix units; bf16: bf16 operands, f32 accumulation
  bool out_bf16 = false;               // the product is stored rounded to bf16
};

struct Launch {
  LaunchKind kind = LaunchKind::Map;
  std::string name;             // the kernel's name: kind, its main op, a hash of its structure
  std::vector<NodeId> nodes;    // the nodes it computes, in schedule order
  std::vector<NodeId> inputs;   // values it reads that other launches (or feeds) made
  std::vector<NodeId> outputs;  // values it stores: read by later launches or outputs of the step
  Shape domain;                 // what it iterates over (the GEMM's output for cublas)
  int64_t grid = 1, block = 1;  // blocks and threads per block (1, 1 for cublas)
  GemmDesc gemm;                // Gemm only
  bool bf16 = false;            // activations stored in bf16
  uint64_t structure = 0;       // hash of ops, shapes and dtypes: equal launches share one kernel
  uint32_t rules = 0;           // the fusion rules that made it, a bit per FusionRule
  bool cublas() const { return kind == LaunchKind::Gemm; }
  bool fused_by(FusionRule r) const { return (rules >> static_cast<int>(r)) & 1u; }
};

struct OptimizerInfo {
  bool present = false;  // a training step (a pass has no optimizer)
  bool clip = false;     // the global norm first: a second launch
  int64_t tensors = 0, elements = 0;
};

struct Lowering {
  size_t nodes = 0;  // computed nodes of the plan the launches cover
  std::vector<Launch> launches;
  int cublas() const;
  int generated() const;
  int distinct_kernels() const;  // generated launches with different structure
};

// Lowers the schedule of `p`. Views of the plan (aliases, folded transposes)
// cost nothing; round-bf16 of a parameter is the optimizer's bf16 copy.
Lowering lower(const Graph& g, const plan::Plan& p, Precision precision, const OptimizerInfo& optimizer = {});

}  // namespace sx::cuda
