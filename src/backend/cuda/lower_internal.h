#pragma once
// What the grouping (lower.cpp) and the description of each launch
// (launch.cpp: its structure hash, name, GEMM descriptor, grid) share.
#include <string>

#include "backend/cuda/lower.h"

namespace sx::cuda::detail {

inline int64_t rows_of(const Shape& s) { return s.rank == 0 || s.back() == 0 ? 1 : s.numel() / s.back(); }

// The node whose values a view shows (through aliases and folded transposes).
NodeId resolve_view(const plan::Plan& p, const Graph& g, NodeId id);
// Ops, shapes, dtypes and how inputs connect: equal hashes, one kernel.
uint64_t structure_hash(const Graph& g, const plan::Plan& p, const Launch& l);
std::string main_op(const Graph& g, const Launch& l);
std::string gemm_name(const GemmDesc& d);
void describe_gemm(const Graph& g, const plan::Plan& p, Launch& l, int64_t siblings, Precision precision);
void set_grid(const Graph& g, Launch& l);
void add_optimizer_launches(Lowering& l, const OptimizerInfo& o);

}  // namespace sx::cuda::detail
