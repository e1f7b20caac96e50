#pragma once
// The node constructors: the only way to add nodes to a Graph. Each checks its
// operands' shapes and dtypes and throws sx::UserError with an E-SHAPE code at
// `at` (the .sx operation) naming the shapes it found. Axes may be negative
// (-1 is the last). They live in sx::ops so that `exp`, `log`, ... do not hide
// the math functions for other code in namespace sx.
#include <string>
#include <vector>

#include "graph/graph.h"

namespace sx::ops {

using Dims = std::vector<int64_t>;

// Leaves
NodeId input(Graph& g, const std::string& name, const Dims& shape, DType dtype, Span at = {});
// Refuses a second param at `path` (E-SHAPE-007, with the first position as a note).
NodeId param(Graph& g, const std::string& path, const Dims& shape, Init init, Span at = {},
             DType dtype = DType::F32);
NodeId full(Graph& g, const Dims& shape, double value, DType dtype = DType::F32, Span at = {});
NodeId scalar(Graph& g, double value, DType dtype = DType::F32, Span at = {});
NodeId arange(Graph& g, int64_t n, DType dtype = DType::I32, Span at = {});

// Elementwise
NodeId cast(Graph& g, NodeId x, DType dtype, Span at = {});
NodeId unary(Graph& g, Op op, NodeId x, Span at = {});
NodeId neg(Graph& g, NodeId x, Span at = {});
NodeId exp(Graph& g, NodeId x, Span at = {});
NodeId log(Graph& g, NodeId x, Span at = {});
NodeId sqrt(Graph& g, NodeId x, Span at = {});
NodeId rsqrt(Graph& g, NodeId x, Span at = {});
NodeId sin(Graph& g, NodeId x, Span at = {});
NodeId cos(Graph& g, NodeId x, Span at = {});
NodeId tanh(Graph& g, NodeId x, Span at = {});
NodeId sigmoid(Graph& g, NodeId x, Span at = {});
NodeId relu(Graph& g, NodeId x, Span at = {});
NodeId gelu(Graph& g, NodeId x, Span at = {});
NodeId silu(Graph& g, NodeId x, Span at = {});
NodeId abs(Graph& g, NodeId x, Span at = {});
NodeId sign(Graph& g, NodeId x, Span at = {});
NodeId round_bf16(Graph& g, NodeId x, Span at = {});
NodeId binary(Graph& g, Op op, NodeId a, NodeId b, Span at = {});
NodeId add(Graph& g, NodeId a, NodeId b, Span at = {});
NodeId sub(Graph& g, NodeId a, NodeId b, Span at = {});
NodeId mul(Graph& g, NodeId a, NodeId b, Span at = {});
NodeId div(Graph& g, NodeId a, NodeId b, Span at = {});
NodeId pow(Graph& g, NodeId a, NodeId b, Span at = {});
NodeId maximum(Graph& g, NodeId a, NodeId b, Span at = {});
NodeId minimum(Graph& g, NodeId a, NodeId b, Span at = {});
NodeId eq(Graph& g, NodeId a, NodeId b, Span at = {});
NodeId ne(Graph& g, NodeId a, NodeId b, Span at = {});
NodeId lt(Graph& g, NodeId a, NodeId b, Span at = {});
NodeId le(Graph& g, NodeId a, NodeId b, Span at = {});
NodeId gt(Graph& g, NodeId a, NodeId b, Span at = {});
NodeId ge(Graph& g, NodeId a, NodeId b, Span at = {});
NodeId where(Graph& g, NodeId cond, NodeId a, NodeId b, Span at = {});

// Matrix
NodeId matmul(Graph& g, NodeId a, NodeId b, Span at = {});

// Reductions over one axis; the *_all forms reduce every axis to a scalar.
NodeId reduce(Graph& g, Op op, NodeId x, int axis, bool keep, Span at = {});
NodeId sum(Graph& g, NodeId x, int axis, bool keep = false, Span at = {});
NodeId mean(Graph& g, NodeId x, int axis, bool keep = false, Span at = {});
NodeId max(Graph& g, NodeId x, int axis, bool keep = false, Span at = {});
NodeId logsumexp(Graph& g, NodeId x, int axis, bool keep = false, Span at = {});
NodeId argmax(Graph& g, NodeId x, int axis, bool keep = false, Span at = {});
NodeId sum_all(Graph& g, NodeId x, Span at = {});
NodeId mean_all(Graph& g, NodeId x, Span at = {});

// Shape
NodeId reshape(Graph& g, NodeId x, const Dims& shape, Span at = {});  // one -1 allowed
NodeId permute(Graph& g, NodeId x, const std::vector<int>& perm, Span at = {});
NodeId transpose(Graph& g, NodeId x, Span at = {});  // swaps the last two axes
NodeId slice(Graph& g, NodeId x, int axis, int64_t start, int64_t end,
             Span at = {});  // negative: from the end
NodeId concat(Graph& g, const std::vector<NodeId>& xs, int axis, Span at = {});
std::vector<NodeId> split(Graph& g, NodeId x, const Dims& sizes, int axis, Span at = {});
std::vector<NodeId> split_n(Graph& g, NodeId x, int64_t parts, int axis, Span at = {});
NodeId gather(Graph& g, NodeId x, NodeId ids, int axis, Span at = {});
NodeId expand(Graph& g, NodeId x, const Shape& shape, Span at = {});
NodeId sum_to(Graph& g, NodeId x, const Shape& shape, Span at = {});
NodeId pad(Graph& g, NodeId x, int axis, int64_t before, int64_t after, Span at = {});
NodeId scatter_add(Graph& g, NodeId src, NodeId ids, int axis, int64_t size, Span at = {});

// Fused. The built-ins that have diagnostics add their tap nodes too (attention:
// attention/entropy, attention/max; cross-entropy: logits/mean, logits/std,
// logits/max); the runtime prunes the unselected ones.
NodeId softmax(Graph& g, NodeId x, int axis = -1, Span at = {});
NodeId log_softmax(Graph& g, NodeId x, int axis = -1, Span at = {});
NodeId layer_norm(Graph& g, NodeId x, NodeId gain, NodeId bias, double eps = 1e-5, Span at = {});
NodeId rms_norm(Graph& g, NodeId x, NodeId gain, double eps = 1e-5, Span at = {});
// scale 0 means 1/sqrt(d). Causal: query i (of tq) sees keys j <= i + tk - tq.
NodeId attention(Graph& g, NodeId q, NodeId k, NodeId v, bool causal, double scale = 0, Span at = {});
// The attention weights softmax(q k^T * scale) [..., tq, tk], as a composition.
NodeId attention_weights(Graph& g, NodeId q, NodeId k, bool causal, double scale, Span at = {});
NodeId embed(Graph& g, NodeId ids, NodeId table, Span at = {});
// Refuses (E-SHAPE-013) a table with fewer rows than `vocab`.
void check_vocab(const Graph& g, NodeId table, int64_t vocab, Span at = {});
NodeId cross_entropy(Graph& g, NodeId logits, NodeId targets, Span at = {});
NodeId accuracy(Graph& g, NodeId logits, NodeId targets, Span at = {});
NodeId dropout(Graph& g, NodeId x, double p, uint64_t seed, uint32_t stream, Span at = {});

// Control
NodeId stop_gradient(Graph& g, NodeId x, Span at = {});
NodeId tap(Graph& g, const std::string& name, NodeId x, Span at = {});

}  // namespace sx::ops
