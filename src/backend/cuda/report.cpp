#include "backend/cuda/report.h"

#include <fmt/format.h>

#include <algorithm>

#include "lang/experiment.h"
#include "plan/pack.h"
#include "util/error.h"
#include "util/memory.h"
#include "util/source.h"

namespace sx::cuda {

std::string gib_text(int64_t bytes) { return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1ll << 30)); }

int64_t device_arena_bytes(const Graph& g, const plan::Plan& p, const Lowering& l) {
  std::vector<bool> half(g.size(), false);
  for (const auto& launch : l.launches)
    for (NodeId id : launch.nodes)
      if (g.node(id).op == Op::RoundBf16) half[id] = true;
  std::vector<plan::Buffer> buffers;
  for (NodeId id : p.schedule) {
    if (p.storage[id] != id || p.bytes[id] == 0) continue;
    int64_t elem = half[id] ? 2 : 4;
    int64_t bytes = (g.node(id).shape.numel() * elem + plan::kAlign - 1) / plan::kAlign * plan::kAlign;
    buffers.push_back({std::max<int64_t>(bytes, plan::kAlign), p.first[id], p.last[id]});
  }
  std::vector<int64_t> offsets;
  return plan::pack_buffers(buffers, offsets);
}

DevicePlan device_plan(const Graph& g, const plan::Plan& p, const Lowering& l, Precision precision,
                       const std::vector<TensorSize>& params, int state_per_element, bool training) {
  DevicePlan d;
  d.arena = device_arena_bytes(g, p, l);
  int64_t elements = 0;
  for (const auto& t : params) elements += t.elements;
  d.params = elements * 4;
  if (precision == Precision::bf16) d.param_copies = elements * 2;
  if (training) {
    d.grads = elements * 4;
    d.optimizer = elements * 4 * state_per_element;
  }
  return d;
}

OptimizerInfo optimizer_info(const std::vector<ParamInfo>& params, const OptimizerSpec* spec, bool training) {
  OptimizerInfo o;
  if (!training || !spec) return o;
  o.present = true;
  o.clip = spec->clip.has_value();
  o.tensors = static_cast<int64_t>(params.size());
  for (const auto& p : params) o.elements += p.shape.numel();
  return o;
}

std::vector<TensorSize> tensor_sizes(const std::vector<ParamInfo>& params) {
  std::vector<TensorSize> out;
  for (const auto& p : params) out.push_back({p.path, p.shape.numel()});
  return out;
}

DevicePlan run_device_plan(const Graph& g, const plan::Plan& p, const Lowering& l, const RunDecl& run,
                           const std::vector<ParamInfo>& params, bool training) {
  Precision precision = Precision::f32;
  parse_precision(run.precision, &precision);
  const OptimizerSpec* spec = run.optimizer.get();
  int state = !spec ? 0 : spec->kind == "sgd" ? (spec->momentum != 0) : 2;
  return device_plan(g, p, l, precision, tensor_sizes(params), state, training);
}

std::string report_line(const std::string& graph, const Lowering& l, int64_t plan_bytes,
                        const CompiledLaunches* compiled) {
  std::string kernels = "not compiled";
  if (compiled) {
    kernels.clear();
    if (compiled->cached) kernels = fmt::format("{} cached", compiled->cached);
    if (compiled->compiled) kernels += fmt::format("{}{} compiled", kernels.empty() ? "" : ", ", compiled->compiled);
  }
  return fmt::format("lowering {}: {} nodes -> {} launches ({} cublas, {} generated{}{}) plan {}\n", graph, l.nodes,
                     l.launches.size(), l.cublas(), l.generated(), kernels.empty() ? "" : ": ", kernels,
                     gib_text(plan_bytes));
}

namespace {

std::string where_text(const Graph& g, const Launch& launch) {
  std::vector<std::string> paths;
  std::string where;
  for (NodeId id : launch.nodes) {
    const Node& n = g.node(id);
    if (!n.path.empty() && std::find(paths.begin(), paths.end(), n.path) == paths.end()) paths.push_back(n.path);
    if (where.empty() && n.span.valid()) where = Sources::global().where(n.span);
  }
  std::string text;
  for (size_t i = 0; i < paths.size() && i < 3; ++i) text += (i ? "," : "") + paths[i];
  if (paths.size() > 3) text += fmt::format(",+{}", paths.size() - 3);
  if (text.empty()) text = "-";
  if (!where.empty()) text += " (" + where + ")";
  return text;
}

}  // namespace

std::string kernel_lines(const Graph& g, const Lowering& l, const CompiledLaunches* compiled) {
  std::string out;
  for (size_t i = 0; i < l.launches.size(); ++i) {
    const Launch& x = l.launches[i];
    std::string grid =
        x.cublas() ? fmt::format("batch {}x{} m{} n{} k{}", x.gemm.grouped, x.gemm.batch, x.gemm.m, x.gemm.n, x.gemm.k)
                   : fmt::format("grid {}x{}", x.grid, x.block);
    bool bf16 = x.bf16 || x.gemm.out_bf16 || (x.cublas() && x.gemm.compute == Precision::bf16);
    std::string dtype = x.cublas() ? precision_name(x.gemm.compute) : bf16 ? "bf16" : "f32";
    std::string code;
    if (compiled && i < compiled->resources.size() && !compiled->resources[i].name.empty()) {
      const KernelResources& r = compiled->resources[i];
      code = fmt::format(" {} registers", r.registers);
      if (r.spill_store_bytes || r.spill_load_bytes)
        code += fmt::format(", spills {}+{} bytes", r.spill_store_bytes, r.spill_load_bytes);
      if (r.stack_bytes) code += fmt::format(", stack {} bytes", r.stack_bytes);
    }
    out += fmt::format("  {:>3} {} {} {}{} {}{}\n", i, x.name, grid, dtype, x.domain.str(), where_text(g, x), code);
  }
  return out;
}

void check_fits(const Graph& g, const plan::Plan& p, const DevicePlan& plan, int64_t available,
                const std::string& source, const std::vector<TensorSize>& params) {
  if (plan.total() <= available) return;
  Diagnostic d;
  d.code = Code::MEM_001;
  d.message = fmt::format("the memory plan needs {}, the device has {} ({})", gib_text(plan.total()),
                          gib_text(available), source);
  d.notes.push_back(
      fmt::format("arena {}, parameters {}{}, gradients {}, optimizer state {}, workspace {}", bytes_text(plan.arena),
                  bytes_text(plan.params),
                  plan.param_copies ? fmt::format(" (+{} bf16 copies)", bytes_text(plan.param_copies)) : std::string(),
                  bytes_text(plan.grads), bytes_text(plan.optimizer), bytes_text(plan.workspace)));
  std::string largest;
  for (const auto& [id, bytes] : p.largest(3)) {
    const Node& n = g.node(id);
    largest += fmt::format("{}{} {} {}{}", largest.empty() ? "" : ", ", bytes_text(bytes),
                           n.path.empty() ? "-" : n.path, op_name(n.op), n.shape.str());
  }
  if (!largest.empty()) d.notes.push_back("largest buffers: " + largest);
  std::vector<TensorSize> big = params;
  std::stable_sort(big.begin(), big.end(), [](const auto& a, const auto& b) { return a.elements > b.elements; });
  std::string top;
  for (size_t i = 0; i < big.size() && i < 3; ++i)
    top += fmt::format("{}{} {}", i ? ", " : "", big[i].path, bytes_text(big[i].elements * 4));
  if (!top.empty()) d.notes.push_back("largest parameters: " + top);
  d.help =
      "raise :microbatches (each microbatch's activations are smaller) or use :precision bf16 (2-byte activations)";
  throw UserError(d);
}

}  // namespace sx::cuda
