#pragma once
// What the grouping (lower.cpp, lower_roles.cpp) and the description of each
// launch (launch.cpp: its structure hash, name, GEMM descriptor, grid) share.
#include <string>
#include <vector>

#include "backend/cuda/lower.h"

namespace sx::cuda::detail {

inline int64_t rows_of(const Shape& s) { return s.rank == 0 || s.back() == 0 ? 1 : s.numel() / s.back(); }

// How a node takes part in a kernel (lower_roles.cpp).
enum class Role : uint8_t {
  Skip,    // computed by nothing here: a leaf fed or bound, a view, an inline constant, a weight copy
  Elem,    // elementwise over its shape, inputs broadcast
  RowOp,   // a reduction along the last axis, softmax, a norm
  LossOp,  // cross-entropy, accuracy: rows then their mean
  ColOp,   // a reduction over another axis, sum-to
  Index,   // reads its input at other positions: slice, pad, concat, permute, expand, reshape copy
  Matmul,
  Attn,
  GatherOp,
  ScatterOp,
};
// The nodes no launch computes (skip): leaves, views, a parameter's bf16
// copy (written by the optimizer with the update, as llm.c does), and
// constants recomputed inline by each reader (inline_: full, arange and
// elementwise functions of them, unless an output of the step).
void mark_skipped(const Graph& g, const plan::Plan& p, const std::vector<bool>& is_output, std::vector<bool>& skip,
                  std::vector<bool>& inline_);
Role role_of(const Graph& g, const plan::Plan& p, NodeId id, const std::vector<bool>& skip);
// The rule by which a node of `op` and `role` joins a launch of `kind`
// (late: one that others already read, or a closed column kernel).
FusionRule join_rule(LaunchKind kind, bool late, Op op, Role role);
// The shape a row kernel iterates over when `id` is its reduction.
inline Shape row_domain(const Graph& g, NodeId id) { return g.node(g.node(id).inputs[0]).shape; }
inline bool same_rows(const Shape& a, const Shape& b) {
  return a.rank > 0 && b.rank > 0 && a.numel() == b.numel() && a.back() == b.back();
}
// A per-row statistic of domain d: [..., 1] (keep) or the rows alone.
inline bool row_stat(const Shape& s, const Shape& d) {
  return s.numel() == rows_of(d) && (s.rank == 0 || s.back() == 1);
}

// The node whose values a view shows (through aliases and folded transposes).
NodeId resolve_view(const plan::Plan& p, const Graph& g, NodeId id);
// Ops, shapes, dtypes and how inputs connect: equal hashes, one kernel.
uint64_t structure_hash(const Graph& g, const plan::Plan& p, const Launch& l);
std::string main_op(const Graph& g, const Launch& l);
std::string gemm_name(const GemmDesc& d);
void describe_gemm(const Graph& g, const plan::Plan& p, Launch& l, int64_t siblings, Precision precision);
void set_grid(const Graph& g, Launch& l);
// A grouped launch's GEMM descriptor (with `siblings` products), grid,
// structure hash and name, from its nodes, inputs and outputs.
void describe_launch(const Graph& g, const plan::Plan& p, Launch& l, int64_t siblings, Precision precision);
void add_optimizer_launches(Lowering& l, const OptimizerInfo& o);

}  // namespace sx::cuda::detail
