#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "backend/cuda/lower_internal.h"
#include "util/error.h"

namespace sx::cuda {

bool parse_precision(const std::string& text, Precision* out) {
  if (text == "f32") return *out = Precision::f32, true;
  if (text == "tf32") return *out = Precision::tf32, true;
  if (text == "bf16") return *out = Precision::bf16, true;
  return false;
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::f32:
      return "f32";
    case Precision::tf32:
      return "tf32";
    case Precision::bf16:
      return "bf16";
  }
  return "?";
}

const char* launch_kind_name(LaunchKind k) {
  switch (k) {
    case LaunchKind::Gemm:
      return "gemm";
    case LaunchKind::Map:
      return "map";
    case LaunchKind::Row:
      return "row";
    case LaunchKind::Column:
      return "column";
    case LaunchKind::Gather:
      return "gather";
    case LaunchKind::Scatter:
      return "scatter";
    case LaunchKind::Attention:
      return "attention";
    case LaunchKind::Loss:
      return "loss";
    case LaunchKind::Optimizer:
      return "optimizer";
  }
  return "?";
}

const std::vector<FusionRuleInfo>& fusion_rules() {
  using R = FusionRule;
  static const std::vector<FusionRuleInfo> rules = {
      {R::InlineConstant, "inline-constant"},
      {R::ParamBf16Copy, "param-bf16-copy"},
      {R::ElementwiseChain, "elementwise-chain"},
      {R::ProducerPrologue, "producer-prologue"},
      {R::RowPrologue, "row-prologue"},
      {R::RowEpilogue, "row-epilogue"},
      {R::RowChain, "row-chain"},
      {R::SharedRows, "shared-rows"},
      {R::ColumnPrologue, "column-prologue"},
      {R::SideBySideColumns, "side-by-side-columns"},
      {R::GemmBias, "gemm-bias"},
      {R::GemmGelu, "gemm-gelu"},
      {R::GemmDGelu, "gemm-dgelu"},
      {R::GemmBf16Out, "gemm-bf16-out"},
      {R::GemmBiasGrad, "gemm-bias-grad"},
      {R::SiblingProducts, "sibling-products"},
      {R::AttentionLayout, "attention-layout"},
      {R::GatherEpilogue, "gather-epilogue"},
      {R::LateElementwise, "late-elementwise"},
  };
  return rules;
}

const char* fusion_rule_name(FusionRule r) {
  for (const auto& info : fusion_rules())
    if (info.rule == r) return info.name;
  return "?";
}

int Lowering::cublas() const {
  int n = 0;
  for (const auto& l : launches) n += l.cublas();
  return n;
}
int Lowering::generated() const { return static_cast<int>(launches.size()) - cublas(); }
int Lowering::distinct_kernels() const {
  std::vector<uint64_t> seen;
  for (const auto& l : launches)
    if (!l.cublas()) seen.push_back(l.structure);
  std::sort(seen.begin(), seen.end());
  return static_cast<int>(std::unique(seen.begin(), seen.end()) - seen.begin());
}

namespace detail {

NodeId resolve_view(const plan::Plan& p, const Graph& g, NodeId id) {
  while (p.view[id]) id = g.node(id).inputs[0];
  return id;
}

uint64_t structure_hash(const Graph& g, const plan::Plan& p, const Launch& l) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
  };
  mix(static_cast<uint64_t>(l.kind));
  for (int d = 0; d < l.domain.rank; ++d) mix(static_cast<uint64_t>(l.domain[d]));
  std::vector<NodeId> local = l.nodes;
  for (NodeId id : l.nodes) {
    const Node& n = g.node(id);
    mix(static_cast<uint64_t>(n.op));
    mix(static_cast<uint64_t>(n.dtype));
    for (int d = 0; d < n.shape.rank; ++d) mix(static_cast<uint64_t>(n.shape[d]));
    mix(static_cast<uint64_t>(n.attrs.axis) | (uint64_t(n.attrs.keep) << 32) | (uint64_t(n.attrs.causal) << 33));
    uint64_t bits;
    std::memcpy(&bits, &n.attrs.value, sizeof bits);
    mix(bits);
    for (NodeId raw : n.inputs) {  // where each input comes from: a member (by index) or outside (its shape)
      NodeId in = resolve_view(p, g, raw);
      auto it = std::find(local.begin(), local.end(), in);
      if (it != local.end()) {
        mix(static_cast<uint64_t>(it - local.begin()));
      } else {
        mix(0xffff);
        const Node& s = g.node(in);
        mix(static_cast<uint64_t>(s.op == Op::Full || s.op == Op::Arange ? 1000 + int(s.op) : 0));
        for (int d = 0; d < s.shape.rank; ++d) mix(static_cast<uint64_t>(s.shape[d]));
      }
    }
  }
  return h;
}

// The op a kernel is named after: its reduction or fused op, else its first.
std::string main_op(const Graph& g, const Launch& l) {
  for (NodeId id : l.nodes) {
    OpKind k = op_kind(g.node(id).op);
    if (k == OpKind::Fused || k == OpKind::Reduce || k == OpKind::Matrix) return op_name(g.node(id).op);
  }
  for (NodeId id : l.nodes)
    if (op_kind(g.node(id).op) == OpKind::Shape) return op_name(g.node(id).op);
  return op_name(g.node(l.nodes.front()).op);
}

void describe_gemm(const Graph& g, const plan::Plan& p, Launch& l, int64_t siblings, Precision precision) {
  GemmDesc& d = l.gemm;
  NodeId mm = kNoNode;
  for (NodeId id : l.nodes)
    if (mm == kNoNode && g.node(id).op == Op::Matmul) mm = id;
  const Node& n = g.node(mm);
  auto transposed = [&](NodeId raw) { return p.view[raw] && g.node(raw).op == Op::Permute; };
  d.trans_a = transposed(n.inputs[0]);
  d.trans_b = transposed(n.inputs[1]);
  d.m = n.shape[n.shape.rank - 2];
  d.n = n.shape.back();
  d.batch = n.shape.numel() / std::max<int64_t>(1, d.m * d.n);
  const Shape& a = g.node(n.inputs[0]).shape;
  d.k = a.back();
  d.broadcast_b = g.node(n.inputs[1]).shape.rank == 2 && n.shape.rank > 2;
  d.compute = precision;
  d.grouped = siblings;
  for (NodeId id : l.nodes) {
    const Node& e = g.node(id);
    if (e.op == Op::Add) {
      d.epilogue = Epilogue::Bias;
      d.bias =
          resolve_view(p, g, e.inputs[0]) == mm ? resolve_view(p, g, e.inputs[1]) : resolve_view(p, g, e.inputs[0]);
    }
    if (e.op == Op::Gelu) d.epilogue = d.epilogue == Epilogue::Bias ? Epilogue::BiasGelu : Epilogue::Gelu;
    if (e.op == Op::RoundBf16) d.out_bf16 = true;
    if (e.op == Op::Mul) d.epilogue = Epilogue::DGelu;
    if (e.op == Op::SumTo) d.bias_grad = id;
    if (e.op == Op::Matmul && id != mm) {
      const Shape& o = e.shape;
      SX_ASSERT(o == n.shape, "grouped products of one shape");
    }
  }
  // bf16 operands: the graph rounds them (round-bf16 nodes) where the product reads them.
  bool bf16_operands = g.node(resolve_view(p, g, n.inputs[0])).op == Op::RoundBf16;
  if (bf16_operands) d.compute = Precision::bf16;
}

void set_grid(const Graph& g, Launch& l) {
  auto ceil_div = [](int64_t a, int64_t b) { return std::max<int64_t>(1, (a + b - 1) / b); };
  const Shape& d = l.domain;
  switch (l.kind) {
    case LaunchKind::Gemm:
      l.grid = 1, l.block = 1;
      break;
    case LaunchKind::Map:
    case LaunchKind::Gather:
      l.grid = ceil_div(d.numel(), 1024), l.block = 256;
      break;
    case LaunchKind::Row:
    case LaunchKind::Loss:
      l.grid = ceil_div(rows_of(d), 8), l.block = 256;
      break;  // a warp per row
    case LaunchKind::Column: {
      const Node& out = g.node(l.nodes.back());
      l.grid = ceil_div(out.shape.numel(), 32), l.block = 256;  // 32 columns, 8 strips summed in order
      break;
    }
    case LaunchKind::Scatter:
      l.grid = ceil_div(g.node(l.nodes.back()).shape.numel(), 1024), l.block = 256;
      break;
    case LaunchKind::Attention: {
      const Shape& q = g.node(g.node(l.nodes.front()).inputs[0]).shape;
      int64_t tq = q.rank >= 2 ? q[q.rank - 2] : 1;
      l.grid = ceil_div(q.numel() / std::max<int64_t>(1, q.back() * tq), 1) * ceil_div(tq, 64), l.block = 128;
      break;
    }
    case LaunchKind::Optimizer:
      break;
  }
}

std::string gemm_name(const GemmDesc& d) {
  static const char* epi[] = {"", "_bias", "_gelu", "_bias_gelu", "_dgelu"};
  return fmt::format("cublaslt_{}{}{}{}_{}{}", d.trans_a ? 't' : 'n', d.trans_b ? 't' : 'n',
                     epi[static_cast<int>(d.epilogue)], d.bias_grad != kNoNode ? "_bgradb" : "",
                     precision_name(d.compute), d.out_bf16 ? "_bf16out" : "");
}

void add_optimizer_launches(Lowering& l, const OptimizerInfo& o) {
  if (!o.present) return;
  auto launch = [&](const char* name) {
    Launch x;
    x.kind = LaunchKind::Optimizer;
    x.name = name;
    x.domain = Shape{o.elements};
    x.grid = std::max<int64_t>(1, std::min<int64_t>((o.elements + 1023) / 1024, 65535));
    x.block = 256;
    x.structure = std::hash<std::string>{}(name);
    l.launches.push_back(std::move(x));
  };
  // The global norm: per-block partial sums in a fixed order, the last block adds them in order.
  if (o.clip) launch("optimizer_grad_norm");
  launch("optimizer_multi_tensor_update");
}

void describe_launch(const Graph& g, const plan::Plan& p, Launch& l, int64_t siblings, Precision precision) {
  if (l.kind == LaunchKind::Gemm) describe_gemm(g, p, l, siblings, precision);
  set_grid(g, l);
  l.structure = structure_hash(g, p, l);
  std::string op = main_op(g, l);
  std::replace(op.begin(), op.end(), '-', '_');
  l.name = l.kind == LaunchKind::Gemm ? gemm_name(l.gemm)
                                      : fmt::format("{}_{}_{:08x}", launch_kind_name(l.kind), op,
                                                    static_cast<uint32_t>(l.structure ^ (l.structure >> 32)));
}

}  // namespace detail
}  // namespace sx::cuda
