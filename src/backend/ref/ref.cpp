#include "backend/ref/ref.h"

#include "backend/ref/kernels.h"
#include "graph/philox.h"

namespace sx::ref {

namespace {

// Which nodes `outputs` depend on (all when outputs is empty).
std::vector<bool> needed(const Graph& g, const std::vector<NodeId>& outputs) {
  std::vector<bool> need(g.size(), outputs.empty());
  for (NodeId o : outputs) need[o] = true;
  for (NodeId id = static_cast<NodeId>(g.size()); id-- > 0;)
    if (need[id])
      for (NodeId in : g.node(id).inputs) need[in] = true;
  return need;
}

template <typename T>
const Tensor<T>& fed(const std::map<std::string, Tensor<T>>& feeds, const std::string& name, const Node& n) {
  auto it = feeds.find(name);
  SX_ASSERT(it != feeds.end(), "no value fed for " + name);
  SX_ASSERT(it->second.shape == n.shape && it->second.dtype == n.dtype,
            "value fed for " + name + " is " + it->second.shape.str() + ", expected " + n.shape.str());
  return it->second;
}

template <typename T>
void eval_leaf(const Node& n, const Feeds<T>& feeds, Tensor<T>& out) {
  switch (n.op) {
    case Op::Input:
      out = fed(feeds.inputs, n.attrs.name, n);
      return;
    case Op::Param:
      out = fed(feeds.params, n.path, n);
      return;
    case Op::Full:
      if (is_float(n.dtype))
        std::fill(out.f.begin(), out.f.end(), static_cast<T>(n.attrs.value));
      else
        std::fill(out.i.begin(), out.i.end(), static_cast<int32_t>(n.attrs.value));
      return;
    case Op::Arange:
      for (int64_t k = 0; k < out.numel(); ++k) {
        if (is_float(n.dtype))
          out.f[k] = static_cast<T>(k);
        else
          out.i[k] = static_cast<int32_t>(k);
      }
      return;
    default:
      SX_ASSERT(false, "not a leaf");
  }
}

}  // namespace

template <typename T>
std::vector<Tensor<T>> evaluate(const Graph& g, const Feeds<T>& feeds, const std::vector<NodeId>& outputs) {
  std::vector<bool> need = needed(g, outputs);
  std::vector<Tensor<T>> vals(g.size());
  Ins<T> ins;
  for (NodeId id = 0; id < g.size(); ++id) {
    if (!need[id]) continue;
    const Node& n = g.node(id);
    Tensor<T>& out = vals[id];
    out = Tensor<T>::zeros(n.dtype, n.shape);
    ins.clear();
    for (NodeId in : n.inputs) ins.push_back(&vals[in]);
    switch (op_kind(n.op)) {
      case OpKind::Leaf:
        eval_leaf(n, feeds, out);
        break;
      case OpKind::Unary:
      case OpKind::Binary:
      case OpKind::Ternary:
        eval_elementwise(n, ins, out);
        break;
      case OpKind::Matrix:
      case OpKind::Reduce:
        eval_reduce(n, ins, out);
        break;
      case OpKind::Shape:
        eval_shape(n, ins, out);
        break;
      case OpKind::Fused:
      case OpKind::Control:
        eval_fused(n, ins, out, feeds.rng_offset);
        break;
    }
    if (n.dtype == DType::BF16)
      for (T& v : out.f) v = round_bf16(v);
  }
  return vals;
}

template <typename T>
Tensor<T> init_param(const Node& p, uint64_t seed, uint32_t stream) {
  SX_ASSERT(p.op == Op::Param, "init_param of a non-param");
  Tensor<T> t = Tensor<T>::zeros(p.dtype, p.shape);
  const Init& init = p.attrs.init;
  for (int64_t e = 0; e < t.numel(); ++e) {
    double v = 0;
    switch (init.kind) {
      case Init::Zeros:
        v = 0;
        break;
      case Init::Ones:
        v = 1;
        break;
      case Init::Normal:
        v = init.a * philox::normal(seed, stream, 0, e);
        break;
      case Init::Uniform:
        v = init.a + (init.b - init.a) * philox::uniform(philox::bits(seed, stream, 0, e));
        break;
    }
    t.f[e] = p.dtype == DType::BF16 ? round_bf16(static_cast<T>(v)) : static_cast<T>(v);
  }
  return t;
}

template std::vector<Tensor<float>> evaluate(const Graph&, const Feeds<float>&, const std::vector<NodeId>&);
template std::vector<Tensor<double>> evaluate(const Graph&, const Feeds<double>&, const std::vector<NodeId>&);
template Tensor<float> init_param(const Node&, uint64_t, uint32_t);
template Tensor<double> init_param(const Node&, uint64_t, uint32_t);

}  // namespace sx::ref
