#pragma once
// The CPU kernels, one function per group of ops (k_*.cpp), and what they
// share. A kernel gets its node, its inputs' and output's data (4 bytes an
// element: float for f32 and bf16, int32 for i32 and bool) and what the
// executor prepared for it at construction, so a step allocates nothing.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "backend/cpu/strided.h"
#include "backend/cpu/thread_pool.h"
#include "graph/graph.h"

namespace sx::cpu {

// How a matmul runs (gemm.h), from its shapes alone: `batches` products of
// [m, k] x [k, n] (a weight broadcast over a contiguous batch is one product
// of [batch * m, k] x [k, n]). One product runs over the whole pool (both
// operands packed once into the shared scratch); several run one per task,
// grouped into `chunks` so that small ones run inline.
struct MatmulShape {
  bool merged = false;  // the batches were merged into the rows
  int64_t batches = 0, m = 0, n = 0, k = 0;
  int64_t chunks = 1;
  float alpha = 1.0f;  // each element times alpha once its sum is complete (a fused mul by a scalar)
};

// Per node, everything a kernel needs that depends only on shapes.
struct Prep {
  Strided it;                      // elementwise and copy ops: operand 0 is the output
  std::vector<Strided> parts;      // concat: one copy per input
  std::vector<int64_t> batch;      // matmul: per batch, the A and B matrix indices
  bool trans[2] = {false, false};  // matmul: the operand is a folded transpose, read transposed
  bool bf16 = false;               // matmul, attention's scores: a product of bf16 values (gemm.h's bf16)
  MatmulShape mm;                  // matmul: how the product runs
  int64_t scratch_floats = 0;      // per thread (matmul, attention) or the first thread's (cross-entropy)
  int64_t shared_floats = 0;       // one buffer for all threads (matmul)
  // attention: its output [B, H, T, D] written as [B, T, H, D] with these
  // H heads (the permute that moved the heads back, not run: the executor's
  // fold_head_permutes); 0: as [B, H, T, D].
  int64_t heads_last = 0;
  // attention: its output rounded to bf16 as a tile's rows are written (the
  // round-bf16 in place after it, not run: fuse_output_rounds).
  bool round_output = false;
};

struct Args {
  const Node& n;
  const Graph& g;
  const void* const* in;
  void* out;
  const Prep& prep;
  ThreadPool& pool;
  float* const* scratch;  // per thread, prep.scratch_floats each
  float* shared;          // prep.shared_floats
  uint64_t rng_offset;

  const float* f(size_t i) const { return static_cast<const float*>(in[i]); }
  const int32_t* i(size_t k) const { return static_cast<const int32_t*>(in[k]); }
  float* fo() const { return static_cast<float*>(out); }
  int32_t* io() const { return static_cast<int32_t*>(out); }
  const Node& input(size_t k) const { return g.node(n.inputs[k]); }
};

// Elements per task for cheap elementwise work: big enough to amortise a
// dispatch, small enough to split a [512, 1024] activation.
constexpr int64_t kGrain = 16384;
// Rows of `d` elements per task: about kGrain elements, at least one row.
inline int64_t row_grain(int64_t d) { return std::max<int64_t>(1, kGrain / std::max<int64_t>(d, 1)); }

void prepare(const Graph& g, NodeId id, Prep& prep);  // fills what the op's kernel needs

void run_elementwise(const Args& a);  // unary, binary, where, cast
// A gelu-grad `u` and the mul `b` that reads its output as input `slot`, in
// one pass: b's output = the mul of gelu-grad(u's input) with b's other input.
void run_unary_binary(const Args& u, const Args& b, int slot);
// A float add/sub/mul/div `u` and the add/sub/mul/div `b` that reads its
// output as input `slot`, a segment of a row at a time through per-thread
// scratch (kFuseSegment floats): b's output, and u's never written. The two
// ops' inner lengths must be multiples of each other.
constexpr int64_t kFuseSegment = 2048;
void run_binary_binary(const Args& u, const Args& b, int slot, const float* scale);
// A where `u` and the softmax `b` over the last axis of its output, in place
// (b's output is u's): each task selects its rows, then softmaxes them.
void run_where_softmax(const Args& u, const Args& b);
void run_reduce(const Args& a);  // sum, mean, max, logsumexp, argmax
// A float mul `u` of two operands of its shape and the sum or mean `b` over
// the last axis of its output (the softmax and norm backwards): each row's
// products added as they are made, in float_line's order; u's output is
// never written.
void run_mul_reduce(const Args& u, const Args& b);
// `bias` (optional, n floats) added to every row of the result, as a
// following add of a broadcast row would (a fused matmul + add); `then`
// (optional, a single product's only) carries gemm.h's Gemm::then, then_x,
// then_out and ldo: an elementwise step fused into the product's tiles.
struct Gemm;
void run_matmul(const Args& a, const float* bias = nullptr, const Gemm* then = nullptr);
// Product p (of prep.mm.batches) of a matmul step, as run_matmul runs it (no bias).
Gemm matmul_product(const Args& a, int64_t p);
// Fills prep.mm and the matmul's scratch once prep.batch and prep.trans are known.
void plan_matmul(const Graph& g, const Node& n, Prep& prep);
void run_attention(const Args& a);
int64_t attention_scratch(const Node& q, const Node& k, const Node& v);  // floats per thread

// Attention's backward as autodiff writes it (grad_Attention), the steps the
// executor would run one after another (executor_attention_grad.cpp finds
// them) run one head at a time instead: the scores S = q k^T (alpha the
// scale), the fused where + softmax P, dV = P^T gy, dP = gy v^T, the fused
// mul + sum r = sum(dP * P), the fused binary pair (and its scale) dS, then
// dQ = dS k and dK = dS^T q. S, P, dP, r and dS live in the head's scratch
// (in L2) and never in the arena; each element is computed by the same
// operations as the steps' own kernels, so the same bits.
struct AttentionGradSteps {
  const Args *scores, *where, *softmax, *dv, *dp, *mul, *reduce, *first, *second, *dq, *dk;
  int second_slot = 0;           // which input of `second` is first's output
  const float* scale = nullptr;  // the pair's third step (a mul by this constant), if any
  NodeId S = kNoNode, P = kNoNode, dP = kNoNode, r = kNoNode, dS = kNoNode;  // held per head
  int64_t heads = 0, rows = 0, keys = 0;                                     // S is [heads..., rows, keys]
  int64_t chunks = 1;  // tasks the heads are grouped into (small ones run inline)
  // dV, dQ, dK ([B, H, rows or keys, D]) written as [B, rows or keys, H, D]
  // with these H heads (as Prep::heads_last); 0: as they are.
  int64_t heads_last[3] = {0, 0, 0};
  // dV, dQ, dK rounded to bf16 as each head's are written (fuse_output_rounds).
  bool round[3] = {false, false, false};
};
int64_t attention_grad_scratch(int64_t rows, int64_t keys, int64_t widest_product);  // floats per thread
int64_t attention_grad_held(int64_t rows, int64_t keys);  // of which a head's values and lengths
// Returns how many heads skipped their zeros (k_attention_grad.inc's head).
int64_t run_attention_grad(const AttentionGradSteps& s, ThreadPool& pool, float* const* scratch);
// A layer-norm's input gradient (and its gain's, before the sum over rows),
// the steps autodiff's norm_grads emits computed a row at a time
// (executor_norm_grad.cpp, k_norm_grad.inc): dx and gg ([rows, d]; gg may
// be null) from x and gy ([rows, d]) and gain [d]; with `other`, dx is the
// add of it ([rows, d]) that read dx, in the add's operand order. Per
// thread, 3 d floats of scratch.
struct NormGradRows {
  const float *x = nullptr, *gy = nullptr, *gain = nullptr, *other = nullptr;
  float *dx = nullptr, *gg = nullptr;
  int64_t rows = 0, d = 0;
  float eps = 0;
  bool other_first = false;
  bool centre = true;  // a layer-norm's; false: an rms-norm's (no mean taken out of x or of dxhat)
};
void run_layer_norm_grad(const NormGradRows& a, ThreadPool& pool);
void run_shape(const Args& a);  // reshape copies, permute, slice, concat, gather, expand, sum-to, pad, scatter-add
void run_fused(const Args& a);  // softmax, norms, embed, cross-entropy, accuracy, dropout, copies
void run_leaf(const Args& a);   // full, arange

// Ids index an axis of size n: anything else is the user's data (E-SHAPE-012).
void check_ids(const Node& n, const int32_t* ids, int64_t count, int64_t size);

}  // namespace sx::cpu
