#include "backend/cuda/cuda_graph.h"

#include <algorithm>

#include "backend/cuda/kir_interp.h"
#include "backend/cuda/lower_internal.h"
#include "util/error.h"

namespace sx::cuda {

NodeId storage_of(const Graph& g, const plan::Plan& p, NodeId id) { return detail::resolve_view(p, g, id); }

kir::Type value_type(const Node& n) {
  if (n.op == Op::RoundBf16 || n.dtype == DType::BF16) return kir::Type::bf16;
  return is_float(n.dtype) ? kir::Type::f32 : kir::Type::i32;
}

namespace {

constexpr int64_t kAlign = 256;

struct Life {
  NodeId node = kNoNode;
  int first = 0, last = 0;  // call indices; -1: before the first call; INT32_MAX: to the end
  int64_t bytes = 0;
  int64_t offset = -1;
};

bool is_param(const Graph& g, const plan::Plan& p, NodeId id) {
  const Node& n = g.node(id);
  if (n.op == Op::Param) return true;
  return n.op == Op::RoundBf16 && g.node(storage_of(g, p, n.inputs[0])).op == Op::Param;
}

// First fit in order of birth: a value takes the lowest offset free for its whole life.
int64_t pack(std::vector<Life>& lives) {
  std::stable_sort(lives.begin(), lives.end(), [](const Life& a, const Life& b) { return a.first < b.first; });
  std::vector<const Life*> placed;
  int64_t top = 0;
  for (Life& v : lives) {
    std::vector<std::pair<int64_t, int64_t>> busy;  // [begin, end) of values alive with v
    for (const Life* o : placed)
      if (o->last >= v.first) busy.push_back({o->offset, o->offset + o->bytes});
    std::sort(busy.begin(), busy.end());
    int64_t at = 0;
    for (const auto& [b, e] : busy) {
      if (at + v.bytes <= b) break;
      at = std::max(at, e);
    }
    v.offset = at;
    top = std::max(top, at + v.bytes);
    placed.push_back(&v);
  }
  return top;
}

void constant_values(const Node& n, std::vector<uint8_t>& bytes) {
  int64_t count = n.shape.numel();
  kir::Type t = value_type(n);
  bytes.assign(static_cast<size_t>(count * kir::type_bytes(t)), 0);
  for (int64_t i = 0; i < count; ++i) {
    double v = n.op == Op::Arange ? static_cast<double>(i) : n.attrs.value;
    if (t == kir::Type::i32) {
      int32_t x = static_cast<int32_t>(v);
      std::memcpy(&bytes[i * 4], &x, 4);
    } else if (t == kir::Type::bf16) {
      uint16_t x = kir::to_bf16_bits(static_cast<float>(v));
      std::memcpy(&bytes[i * 2], &x, 2);
    } else {
      float x = static_cast<float>(v);
      std::memcpy(&bytes[i * 4], &x, 4);
    }
  }
}

}  // namespace

std::vector<Call> build_calls(const Graph& g, const plan::Plan& p, const Lowering& lowering) {
  std::vector<Call> calls;
  for (size_t i = 0; i < lowering.launches.size(); ++i) {
    const Launch& l = lowering.launches[i];
    const int at = static_cast<int>(i);
    if (l.kind == LaunchKind::Optimizer) continue;
    if (l.cublas()) {
      Launch rest;
      for (kir::Gemm& c : kir::build_gemms(g, p, l, &rest)) {
        Call call;
        call.is_gemm = true;
        call.gemm = c;
        call.from_launch = at;
        calls.push_back(std::move(call));
      }
      if (!rest.nodes.empty()) calls.push_back({false, kir::build(g, p, rest), {}, {}, {}, -1, at});
      continue;
    }
    calls.push_back({false, kir::build(g, p, l), {}, {}, {}, -1, at});
  }
  return calls;
}

LoadedGraph load_graph(Gpu& gpu, const Graph& g, const plan::Plan& p, Lowering lowering, const Resident& resident) {
  LoadedGraph out;
  out.g = &g, out.p = &p;
  out.calls = build_calls(g, p, lowering);
  out.lowering = std::move(lowering);

  // Each value's life over the calls.
  std::map<NodeId, Life> lives;
  auto use = [&](NodeId id, int at, bool write) {
    if (id == kNoNode || is_param(g, p, id)) return;
    Life& v = lives[id];
    if (v.node == kNoNode) v.node = id, v.first = write ? at : -1, v.last = at;
    if (write) v.first = std::min(v.first, at);
    v.last = std::max(v.last, at);
  };
  for (const auto& [name, id] : g.inputs())
    if (p.position[id] >= 0) use(id, -1, true), use(id, INT32_MAX, false);
  for (int i = 0; i < static_cast<int>(out.calls.size()); ++i) {
    const Call& c = out.calls[static_cast<size_t>(i)];
    if (c.is_gemm) {
      const kir::Gemm& m = c.gemm;
      use(m.a, i, false), use(m.b, i, false), use(m.bias, i, false);
      use(m.aux, i, m.epilogue == kir::GemmEpilogue::GeluAux || m.epilogue == kir::GemmEpilogue::GeluAuxBias);
      use(m.d, i, true), use(m.bias_grad, i, true);
      continue;
    }
    for (const kir::Buffer& b : c.kernel.buffers)
      if (b.source == kir::Source::Value) use(b.node, i, b.written);
  }
  std::vector<NodeId> constants;  // outputs no call computes: full and arange leaves
  for (NodeId o : p.outputs) {
    NodeId id = storage_of(g, p, o);
    if (is_param(g, p, id)) continue;
    const Node& n = g.node(id);
    if (!lives.count(id) || lives[id].first == -1) {
      SX_ASSERT(n.op == Op::Full || n.op == Op::Arange || n.op == Op::Input, "an output no launch computes");
      if (n.op != Op::Input) constants.push_back(id);
      use(id, -1, true);
    }
    use(id, INT32_MAX, false);
  }
  std::vector<Life> all;
  for (auto& [id, v] : lives) {
    v.bytes = std::max<int64_t>(
        kAlign, (g.node(id).shape.numel() * kir::type_bytes(value_type(g.node(id))) + kAlign - 1) / kAlign * kAlign);
    all.push_back(v);
  }
  out.arena_bytes = pack(all);
  out.arena = gpu.alloc(out.arena_bytes);
  for (const Life& v : all) out.where[v.node] = out.arena + static_cast<DevicePtr>(v.offset);
  auto where = [&](NodeId id) -> DevicePtr {
    if (id == kNoNode) return 0;
    const Node& n = g.node(id);
    if (n.op == Op::Param) return resident.param(n.path);
    if (is_param(g, p, id)) return resident.param_copy(g.node(storage_of(g, p, n.inputs[0])).path);
    auto it = out.where.find(id);
    SX_ASSERT(it != out.where.end(), "a value with no place in the arena");
    return it->second;
  };
  for (Call& c : out.calls) {
    if (c.is_gemm) {
      const kir::Gemm& m = c.gemm;
      c.gemm_call.desc = m;
      auto at = [](DevicePtr base, int64_t elements, kir::Type t) {
        return base + static_cast<DevicePtr>(elements * kir::type_bytes(t));
      };
      c.gemm_call.a = at(where(m.a), m.offset_a, m.type_a), c.gemm_call.b = at(where(m.b), m.offset_b, m.type_b);
      c.gemm_call.d = at(where(m.d), m.offset_d, m.type_d);
      c.gemm_call.bias = where(m.bias), c.gemm_call.aux = where(m.aux), c.gemm_call.bias_grad = where(m.bias_grad);
      continue;
    }
    c.launch.grid = c.kernel.grid, c.launch.block = c.kernel.block;
    for (const kir::Buffer& b : c.kernel.buffers) {
      SX_ASSERT(b.source == kir::Source::Value || b.source == kir::Source::ParamCopy, "a graph kernel's buffer");
      c.launch.buffers.push_back(b.source == kir::Source::Value ? where(b.node) : resident.param_copy(b.path));
    }
    for (size_t i = 0; i < c.kernel.scalars.size(); ++i) {
      SX_ASSERT(c.kernel.scalars[i].name == "rng_offset", "a graph kernel's scalar");
      c.rng_word = static_cast<int>(out.words.size());
      out.words.push_back(0);
    }
  }
  if (!out.words.empty()) {
    out.scalars = gpu.alloc(static_cast<int64_t>(out.words.size()) * 8);
    for (Call& c : out.calls)
      if (c.rng_word >= 0) c.launch.scalars = out.scalars + static_cast<DevicePtr>(c.rng_word) * 8;
  }
  for (const auto& [path, id] : g.params()) out.where[id] = resident.param(path);
  std::vector<uint8_t> bytes;
  for (NodeId id : constants) {
    constant_values(g.node(id), bytes);
    gpu.upload(out.where.at(id), bytes.data(), static_cast<int64_t>(bytes.size()));
  }
  // The kernels are bound last: `calls` no longer moves.
  for (Call& c : out.calls)
    if (!c.is_gemm) c.launch.kernel = &c.kernel;
  return out;
}

}  // namespace sx::cuda
