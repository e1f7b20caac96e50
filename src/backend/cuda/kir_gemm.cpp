// A Gemm launch as cuBLASLt calls: the graph's row-major X = P Q is the
// column-major D = X^T = Q^T P^T, so cuBLAS's A is the graph's b operand
// and its B the graph's a. Epilogue nodes fold into the call while the
// value they replace is read by nothing outside (cuBLASLt keeps only the
// pre-activation, in aux); the rest become a Map launch after the calls.
#include <fmt/format.h>

#include <algorithm>

#include "backend/cuda/kir.h"
#include "backend/cuda/lower_internal.h"
#include "util/error.h"

namespace sx::cuda::kir {

namespace {

Type storage_of(const Node& n) {
  if (n.op == Op::RoundBf16 || n.dtype == DType::BF16) return Type::bf16;
  return is_float(n.dtype) ? Type::f32 : Type::i32;
}

bool folded_transpose(const Graph& g, const plan::Plan& p, NodeId raw) {
  return p.view[raw] && g.node(raw).op == Op::Permute;
}

GemmCompute compute_of(Precision p) {
  switch (p) {
    case Precision::tf32:
      return GemmCompute::tf32;
    case Precision::bf16:
      return GemmCompute::bf16;
    default:
      return GemmCompute::f32;
  }
}

// The batch index of `operand` (its leading dimensions) for each batch of `out`, broadcast.
std::vector<int64_t> batch_index(const Shape& out, const Shape& operand) {
  Shape ob = out, pb = operand;
  ob.rank -= 2, pb.rank = std::max(0, pb.rank - 2);
  std::vector<int64_t> idx;
  for (int64_t i = 0, n = ob.numel(); i < n; ++i) {
    int64_t rest = i, at = 0, scale = 1;
    for (int d = ob.rank - 1; d >= 0; --d) {
      int64_t c = rest % ob[d];
      rest /= ob[d];
      int pd = d - (ob.rank - pb.rank);
      if (pd >= 0) {
        if (pb[pd] != 1) at += c * scale;
        scale *= pb[pd];
      }
    }
    idx.push_back(at);
  }
  return idx;
}

// One product as cuBLASLt calls: one strided batched call, or (when an
// operand broadcasts only some of its batch dimensions) a call per batch.
std::vector<Gemm> product(const Graph& g, const plan::Plan& p, const Launch& l, NodeId mm) {
  const Node& n = g.node(mm);
  NodeId pa = n.inputs[0], qb = n.inputs[1];
  const Shape &ps = g.node(pa).shape, &qs = g.node(qb).shape;
  int64_t m = n.shape[n.shape.rank - 2], nn = n.shape.back(), k = ps.back();
  Gemm c;
  c.m = nn, c.n = m, c.k = k;
  c.batch = n.shape.numel() / std::max<int64_t>(1, m * nn);
  c.trans_a = folded_transpose(g, p, qb);
  c.lda = c.trans_a ? k : nn;
  c.trans_b = folded_transpose(g, p, pa);
  c.ldb = c.trans_b ? m : k;
  c.ldd = nn;
  c.a = detail::resolve_view(p, g, qb);
  c.b = detail::resolve_view(p, g, pa);
  c.d = mm;
  c.type_a = storage_of(g.node(c.a));
  c.type_b = storage_of(g.node(c.b));
  c.compute = compute_of(l.gemm.compute);
  if (c.type_a == Type::bf16 || c.type_b == Type::bf16) c.compute = GemmCompute::bf16;
  c.ld_aux = nn;
  c.stride_d = m * nn;
  auto strided = [&](const Shape& s, int64_t one, int64_t* stride) {
    if (s.numel() == one) return *stride = 0, true;
    if (s.numel() == one * c.batch) return *stride = one, true;
    return false;
  };
  if (strided(qs, k * nn, &c.stride_a) && strided(ps, m * k, &c.stride_b)) return {c};
  std::vector<int64_t> ia = batch_index(n.shape, qs), ib = batch_index(n.shape, ps);
  std::vector<Gemm> calls;
  for (int64_t bt = 0; bt < c.batch; ++bt) {
    Gemm one = c;
    one.batch = 1, one.stride_a = one.stride_b = one.stride_d = 0;
    one.offset_a = ia[bt] * k * nn, one.offset_b = ib[bt] * m * k, one.offset_d = bt * m * nn;
    calls.push_back(one);
  }
  return calls;
}

bool stored(const Launch& l, NodeId id) { return std::find(l.outputs.begin(), l.outputs.end(), id) != l.outputs.end(); }

// Folds the nodes of `sub` (in order, each reading the call's value so far)
// into the call's epilogue while cuBLASLt can give every value that is read
// afterwards; what remains goes to `rest`.
void fold_epilogue(const Graph& g, const plan::Plan& p, const Launch& l, Gemm& c, const std::vector<NodeId>& sub,
                   std::vector<NodeId>& rest) {
  auto resolve = [&](NodeId id) { return detail::resolve_view(p, g, id); };
  auto read_later = [&](NodeId x, size_t after) {
    for (size_t j = after + 1; j < sub.size(); ++j)
      for (NodeId in : g.node(sub[j]).inputs)
        if (resolve(in) == x) return true;
    return false;
  };
  NodeId cur = c.d, gelu_grad = kNoNode;
  size_t i = 0;
  for (; i < sub.size(); ++i) {
    NodeId id = sub[i];
    const Node& n = g.node(id);
    auto other_of = [&](NodeId x) { return resolve(n.inputs[0]) == x ? resolve(n.inputs[1]) : resolve(n.inputs[0]); };
    bool reads_cur = false;
    for (NodeId in : n.inputs) reads_cur = reads_cur || resolve(in) == cur;
    if (n.op == Op::GeluGrad && !stored(l, id) && gelu_grad == kNoNode) {
      gelu_grad = id;
      continue;
    }
    if (!reads_cur) break;
    bool cur_free = !stored(l, cur) && !read_later(cur, i);
    if (n.op == Op::Add && c.epilogue == GemmEpilogue::Default && c.type_d == Type::f32 && cur_free) {
      NodeId b = other_of(cur);
      const Shape& bs = g.node(b).shape;
      if (bs.rank != 1 || bs[0] != c.m) break;
      c.epilogue = GemmEpilogue::Bias, c.bias = b, c.type_bias = storage_of(g.node(b));
    } else if (n.op == Op::Gelu && (c.epilogue == GemmEpilogue::Default || c.epilogue == GemmEpilogue::Bias) &&
               c.type_d == Type::f32) {
      bool bias = c.epilogue == GemmEpilogue::Bias;
      if (cur_free) {
        c.epilogue = bias ? GemmEpilogue::GeluBias : GemmEpilogue::Gelu;
      } else {
        c.epilogue = bias ? GemmEpilogue::GeluAuxBias : GemmEpilogue::GeluAux;
        c.aux = cur, c.type_aux = storage_of(g.node(cur));
      }
    } else if (n.op == Op::Mul && c.epilogue == GemmEpilogue::Default && gelu_grad != kNoNode &&
               other_of(cur) == gelu_grad && cur_free && !read_later(gelu_grad, i) && c.type_d == Type::f32) {
      c.epilogue = GemmEpilogue::DGelu;
      c.aux = resolve(g.node(gelu_grad).inputs[0]), c.type_aux = storage_of(g.node(c.aux));
      gelu_grad = kNoNode;
    } else if (n.op == Op::RoundBf16 && c.type_d == Type::f32 && cur_free) {
      c.type_d = Type::bf16;
    } else {
      break;
    }
    cur = id;
  }
  c.d = cur;
  if (gelu_grad != kNoNode) rest.push_back(gelu_grad);
  for (; i < sub.size(); ++i)
    if (sub[i] != gelu_grad) rest.push_back(sub[i]);
}

}  // namespace

std::vector<Gemm> build_gemms(const Graph& g, const plan::Plan& p, const Launch& l, Launch* rest) {
  SX_ASSERT(l.cublas(), "build_gemms of a generated launch");
  auto resolve = [&](NodeId id) { return detail::resolve_view(p, g, id); };
  std::vector<Gemm> calls;
  std::vector<NodeId> others;
  for (NodeId id : l.nodes) {
    if (g.node(id).op == Op::Matmul)
      for (Gemm& c : product(g, p, l, id)) calls.push_back(c);
    else
      others.push_back(id);
  }
  *rest = Launch{};
  rest->kind = LaunchKind::Map;
  // A bias gradient: the sums of the product's graph b operand (cuBLAS's A) over k.
  std::vector<NodeId> chain;
  // A product split into a call per batch folds no epilogue.
  bool split = false;
  for (const Gemm& c : calls) split = split || c.offset_a || c.offset_b || c.offset_d;
  for (NodeId id : others) {
    const Node& n = g.node(id);
    bool folded = false;
    if (n.op == Op::SumTo && !split)
      for (Gemm& c : calls)
        if (!folded && c.epilogue == GemmEpilogue::Default && c.bias_grad == kNoNode && resolve(n.inputs[0]) == c.a &&
            !c.trans_a)
          c.bias_grad = id, c.epilogue = GemmEpilogue::BgradA, folded = true;
    if (!folded) chain.push_back(id);
  }
  std::vector<bool> claimed(chain.size(), false);
  for (Gemm& c : calls) {
    if (split) break;
    // The nodes that depend on this product (a gelu' beside it when it is alone).
    std::vector<NodeId> mine{c.d}, sub;
    for (size_t i = 0; i < chain.size(); ++i) {
      const Node& n = g.node(chain[i]);
      bool reads = calls.size() == 1 && n.op == Op::GeluGrad;
      for (NodeId in : n.inputs) reads = reads || std::find(mine.begin(), mine.end(), resolve(in)) != mine.end();
      if (!reads || claimed[i]) continue;
      claimed[i] = true;
      mine.push_back(chain[i]);
      sub.push_back(chain[i]);
    }
    fold_epilogue(g, p, l, c, sub, rest->nodes);
  }
  for (size_t i = 0; i < chain.size(); ++i)
    if (!claimed[i]) rest->nodes.push_back(chain[i]);
  if (!rest->nodes.empty()) {
    std::sort(rest->nodes.begin(), rest->nodes.end(),
              [&](NodeId a, NodeId b) { return p.position[a] < p.position[b]; });
    for (NodeId id : rest->nodes) {
      for (NodeId raw : g.node(id).inputs) {
        NodeId in = resolve(raw);
        bool inside = std::find(rest->nodes.begin(), rest->nodes.end(), in) != rest->nodes.end();
        // What the launch read from memory or computed; anything else is a constant (read inline).
        bool in_memory = std::find(l.inputs.begin(), l.inputs.end(), in) != l.inputs.end() ||
                         std::find(l.nodes.begin(), l.nodes.end(), in) != l.nodes.end();
        if (!inside && in_memory && std::find(rest->inputs.begin(), rest->inputs.end(), in) == rest->inputs.end())
          rest->inputs.push_back(in);
      }
      if (stored(l, id) || id == rest->nodes.back()) rest->outputs.push_back(id);
    }
    rest->domain = g.node(rest->nodes.back()).shape;
    rest->name = l.name + "_epilogue";
    rest->grid = std::max<int64_t>(1, (rest->domain.numel() + 1023) / 1024), rest->block = 256;
  }
  for (Gemm& c : calls) {
    if (c.type_d == Type::f32) c.type_d = storage_of(g.node(c.d));
  }
  return calls;
}

}  // namespace sx::cuda::kir
