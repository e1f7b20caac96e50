#pragma once
// The fast CPU backend: an interpreter over a memory plan. Built once from
// (graph, plan, threads); each step runs the plan's schedule over one arena
// allocated at construction, so a step allocates nothing. Results are
// bit-identical for any thread count (see thread_pool.h and k_matmul.cpp).
//
//   plan::Plan p = plan::make_plan(g, {loss, grad_w, ...});
//   cpu::CpuExecutor ex(g, p, env.threads);
//   ex.bind_param("blocks.0.attn.wq.w", w.data());      // once; params stay outside
//   std::memcpy(ex.input("tokens"), batch, bytes);       // each step (or run(Feeds))
//   ex.run(rng_offset);
//   float loss = ex.f32(loss)[0];  const float* gw = ex.f32(grad_w);
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cpu/thread_pool.h"
#include "backend/ref/tensor.h"
#include "graph/graph.h"
#include "plan/plan.h"

namespace sx::cpu {

struct Gemm;

struct Feeds {
  std::map<std::string, const float*> params;  // by model path; read in place, never copied
  std::map<std::string, const void*> inputs;   // by input name; copied into the arena (4 bytes an element)
  uint64_t rng_offset = 0;                     // the step's Philox offset (dropout)
};

// Whether node `id` holds bf16 values: a round-bf16 or a bf16-typed node
// made them, and only ops that move or copy elements (or add zeros: the
// plan's alias ops, a permute, folded or not, a slice, an expand, a pad)
// lie between. A product of two such operands is the bf16
// product (gemm.h), whatever the plan made of the ops between.
bool holds_bf16_values(const Graph& g, NodeId id);

class CpuExecutor {
 public:
  // The graph must outlive the executor; the plan is copied.
  CpuExecutor(const Graph& g, const plan::Plan& plan, int threads);
  ~CpuExecutor();

  int threads() const { return pool_.size(); }
  const plan::Plan& plan() const { return plan_; }

  // Where the params live: bound once, read each step (an optimizer may
  // update them between steps). Unknown paths, or params the plan does not
  // need, are ignored.
  void bind_param(const std::string& path, const float* data);
  // The arena slot of an input (float* or int32_t* by its dtype): write the
  // step's values there before run(). nullptr when the plan does not need it.
  void* input(const std::string& name);

  // One step: the schedule in order. A bad id in embed/gather/cross-entropy
  // throws sx::UserError E-SHAPE-012, as the reference does.
  void run(uint64_t rng_offset = 0);
  // Binds every param, copies every input, then runs.
  void run(const Feeds& feeds);

  // A computed node's values after run(): outputs stay valid until the next
  // step; any other node only while the plan keeps it live (do not rely on it).
  const float* f32(NodeId id) const { return static_cast<const float*>(ptr_[id]); }
  const int32_t* i32(NodeId id) const { return static_cast<const int32_t*>(ptr_[id]); }
  // A copy as a reference-backend tensor, for tests and reports (allocates).
  ref::Tensor<float> tensor(NodeId id) const;

  // When on, each step adds every op's wall time to op_seconds() (by Op),
  // for the benchmark's breakdown and explain; off by default.
  void set_profiling(bool on) { profiling_ = on; }
  const std::array<double, kNumOps>& op_seconds() const { return op_seconds_; }

  // A step computed with the next one in one pass (fuse_pairs, executor_fuse.cpp).
  enum class Fuse {
    None,
    GeluGradMul,
    Binary,
    BinaryScale,
    MatmulScale,
    WhereSoftmax,
    MulReduce,
    MatmulBias,
    AttentionGrad,     // attention's backward, head by head (counted once per region)
    MatmulThen,        // a gelu, a gelu-grad + mul pair or an add in a product's tiles (counted per product)
    MatmulRound,       // the round of a bf16 product's output, in its blocks
    MatmulColumnSum,   // a sum-to of op(B)'s rows as the product packs them (a bias gradient)
    LayerNormGrad,     // a layer-norm's input gradient, row by row (counted once per region)
    LayerNormGradAdd,  // the add that alone reads that gradient, in the same pass
    IntoPrevious
  };
  // How many steps the schedule runs fused this way (for tests and the benchmark).
  int fused(Fuse kind) const { return fusions_[static_cast<int>(kind)]; }
  // Heads of attention's backward, over every run so far, whose products
  // skipped the causal mask's zeros (k_attention_grad.inc), for tests.
  int64_t heads_skipping_zeros() const { return heads_skipping_zeros_; }
  // Round-bf16 steps not run: in place over values already bf16
  // (skip_idempotent_rounds), for tests and the benchmark.
  int skipped_rounds() const { return skipped_rounds_; }
  // Round-bf16 steps not run because only bf16 products read their value
  // (skip_operand_rounds), for tests and the benchmark.
  int operand_rounds() const { return operand_rounds_; }
  // Round-bf16 steps made as attention or its backward by head writes their
  // input (fuse_output_rounds), for tests and the benchmark.
  int output_rounds() const { return output_rounds_; }
  // Permutes moving attention's heads back that are not run: their input's
  // maker writes in their layout (fold_head_permutes), after the forward
  // attention or after its backward's products, for tests and the benchmark.
  enum class Folded { AttentionOutput, GradProducts };
  int folded_permutes(Folded kind) const { return folded_permutes_[static_cast<int>(kind)]; }

 private:
  struct Step {
    NodeId id;
    Prep prep;
    std::vector<const void*> ins;
    bool compute;  // false for params, inputs, views and steps fused into the previous one
    Fuse fuse = Fuse::None;
    int fuse_slot = 0;            // which input of the next step this one's output is
    int fuse_next = 1;            // how far on that step is (params, which compute nothing, may sit between)
    float fuse_scale = 1.0f;      // BinaryScale: the third step's scalar
    int region = -1;              // the attention_grads_ region this step runs (its first member)
    int norm_region = -1;         // the norm_grads_ region this step runs (its first member)
    int round_step = 0;           // a bf16 matmul: how far on the round of its output made in it is (0: none)
    int then_step = 0;            // a matmul: how far on the step fused into its tiles is (0: none)
    int then_slot = 0;            // which input of that step (an add) the product is
    int colsum_step = 0;          // a matmul: how far back the sum-to of its op(B)'s rows is (0: none)
    bool colsum_rounded = false;  // and whether it sums them rounded to bf16 (skip_operand_rounds)
  };
  // Attention's backward found in the schedule (executor_attention_grad.cpp):
  // the member steps, by role, and the steps between them that it runs first.
  struct AttentionGradRegion {
    size_t scores, where, dv, dp, mul, first, dq, dk;  // steps; a pair's partner is the step after
    std::vector<size_t> hoisted;
    int64_t stage[3];          // dV, dQ, dK: where in staging_ it is written first, or -1
    AttentionGradSteps shape;  // ids, scale and sizes (its Args are made when it runs)
  };
  // A layer-norm's backward found in the schedule (executor_norm_grad.cpp):
  // its nodes by role (gg may be kNoNode; with an add of dx, `dx` is the
  // add's output and `other` its other operand), eps, and the sizes.
  struct NormGradRegion {
    NodeId x, gy, gain, dx, gg, other;
    bool other_first, centre;
    float eps;
    int64_t rows, d;
  };
  // For the fusions (executor_fuse.cpp): a float add, sub, mul or div; a
  // node's bytes; whether two nodes' bytes do not meet (a node outside the
  // arena meets none), or are the very same.
  static bool f32_binary(Op op);
  // The node whose values `id` holds: itself, or through views (a folded
  // transpose, a reshape) the node they share their bytes with.
  NodeId viewed(NodeId id) const;
  int64_t bytes(NodeId id) const;
  bool apart(NodeId a, NodeId b) const;
  bool same_or_apart(NodeId a, NodeId b) const;
  // Whether no step from `from` to `last` writes x's bytes, counting what a
  // step writes for steps fused with it (checked a reach past `last`).
  bool untouched(NodeId x, size_t from, size_t last) const;
  // Whether `out` is in the arena over exactly x's bytes.
  bool in_place(NodeId out, NodeId x) const;
  int64_t fuse_pairs();
  void skip_idempotent_rounds();  // executor_rounds.cpp
  void skip_operand_rounds();
  void fuse_output_rounds();
  // Who makes and who reads each node, for the region matchers: its step
  // (steps_.size() when none), the scheduled nodes reading it (each once),
  // and whether it is a graph output.
  struct Schedule {
    std::vector<size_t> step_of;
    std::vector<std::vector<NodeId>> users;
    std::vector<bool> output;
  };
  Schedule schedule_index() const;
  // The step of the round-bf16 in place over x that alone reads it (x not
  // an output), run on its own; steps_.size() when none (executor_rounds.cpp).
  size_t lone_round_after(NodeId x, const Schedule& s) const;
  int64_t fuse_attention_grads();
  void fuse_norm_grads();
  void fuse_into_products();
  void fuse_column_sums();
  void fold_head_permutes();
  // The steps fused into product s's tiles or packing (fuse_into_products),
  // as gemm.h's Gemm fields set in `then`; nullptr when none.
  const Gemm* product_extras(const Step& s, Gemm& then) const;
  void run_attention_grad_region(const AttentionGradRegion& r, uint64_t rng_offset);
  void run_norm_grad_region(const NormGradRegion& r);
  Args args(size_t step, uint64_t rng_offset);
  void resolve_pointers();
  void execute(Step& s, uint64_t rng_offset);

  const Graph& g_;
  plan::Plan plan_;
  ThreadPool pool_;
  char* arena_ = nullptr;
  std::vector<Step> steps_;
  std::vector<void*> ptr_;                // per node, where its values are this step
  std::vector<const float*> param_data_;  // per param node, as bound
  std::vector<std::unique_ptr<float[]>> scratch_;
  std::vector<float*> scratch_ptrs_;
  std::unique_ptr<float[]> shared_;
  bool profiling_ = false;
  std::array<double, kNumOps> op_seconds_{};
  std::vector<AttentionGradRegion> attention_grads_;
  std::vector<NormGradRegion> norm_grads_;
  std::unique_ptr<float[]> staging_;  // attention_grads_'s staged outputs
  int64_t staging_floats_ = 0;
  std::array<int, static_cast<int>(Fuse::IntoPrevious) + 1> fusions_{};  // per kind
  int64_t heads_skipping_zeros_ = 0;
  int skipped_rounds_ = 0;
  int operand_rounds_ = 0;
  int output_rounds_ = 0;
  int folded_permutes_[2] = {0, 0};
  // Nodes whose values are in another node's bytes (fold_head_permutes,
  // skip_operand_rounds): resolve_pointers points them there.
  struct Redirect {
    NodeId node, to;
  };
  std::vector<Redirect> redirects_;
};

}  // namespace sx::cpu
