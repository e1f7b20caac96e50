// The multi-tensor optimizer kernel (Kind Optimizer) as CUDA C++: for each
// tensor in turn a grid-stride loop over its elements with
// runtime/optimizer.cpp's arithmetic, operation for operation (compile with
// --fmad=false for its bits); the gradient norms summed in double,
// sequentially, by one thread.
#include <functional>

#include "backend/cuda/codegen/print_internal.h"
#include "util/error.h"

namespace sx::cuda::codegen::detail {

namespace {

// `for (int t = 0; t < T; ++t) { switch (t) { case t: the tensor's pointers
// and size; } body }`: one copy of the body whatever the tensor count (a
// body per tensor made NVRTC take tens of seconds on GPT-2's 148), each
// tensor's buffers chosen into registers (no local memory).
struct TensorLoop {
  const Kernel& k;
  std::vector<std::pair<std::string, int OptimizerTensor::*>> roles;  // local name, the tensor's buffer

  std::string buf(int i) const { return k.buffers.at(static_cast<size_t>(i)).name; }
  // The loop's head; `extra(t)` adds per-tensor assignments of locals declared in `declare`.
  std::string open(const std::string& declare, const std::function<std::string(const OptimizerTensor&)>& extra) const {
    const auto& ts = k.optimizer.tensors;
    std::string out;
    for (const auto& [name, role] : roles)
      out += fmt::format("  decltype({0}) {1} = {0};\n", buf(ts.front().*role), name);
    out += "  long long n = 0;\n" + declare;
    out += fmt::format("  for (int t = 0; t < {}; ++t) {{\n    switch (t) {{\n", ts.size());
    for (size_t t = 0; t < ts.size(); ++t) {
      out += fmt::format("      {}:  // {}\n       ", t + 1 == ts.size() ? "default" : fmt::format("case {}", t),
                         ts[t].path);
      for (const auto& [name, role] : roles) {
        SX_ASSERT((ts[t].*role >= 0) == (ts.front().*role >= 0), "optimizer tensors with different buffers");
        out += fmt::format(" {} = {};", name, buf(ts[t].*role));
      }
      out += fmt::format(" n = {}LL;{} break;\n", ts[t].elements, extra(ts[t]));
    }
    return out + "    }\n";
  }
};

}  // namespace

std::string print_optimizer(const Kernel& k, const std::string& signature, const std::string& scalars) {
  const Optimizer& o = k.optimizer;
  SX_ASSERT(!o.tensors.empty(), "an optimizer kernel with no tensor");
  auto buf = [&](int i) { return k.buffers.at(static_cast<size_t>(i)).name; };
  auto sc = [&](size_t i) { return scalar_name(k.scalars.at(i)); };
  auto none = [](const OptimizerTensor&) { return std::string(); };
  std::string out = fmt::format("extern \"C\" __global__ void {}({}) {{\n{}", k.name, signature, scalars);
  if (o.stage == Optimizer::Stage::GradNorm) {
    out += fmt::format("  if (blockIdx.x != 0 || threadIdx.x != 0) return;\n  double* norms = (double*){};\n",
                       buf(o.norms));
    out += "  double total_sq = 0.0;\n";
    out += TensorLoop{k, {{"g", &OptimizerTensor::grad}}}.open("", none);
    out +=
        "    double s = 0.0;\n    for (long long i = 0; i < n; ++i) s += (double)g[i] * g[i];\n"
        "    double norm = sqrt(s);\n    total_sq += norm * norm;\n    norms[t] = norm;\n  }\n";
    out += fmt::format("  norms[{}] = sqrt(total_sq);\n}}\n", o.tensors.size());
    return out;
  }
  out += "  long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n";
  out += "  long long stride = (long long)gridDim.x * blockDim.x;\n";
  out += "  float coef = 1.0f;\n";
  if (o.clip > 0)
    out += fmt::format(
        "  {{\n    double q = {:.17g} / (((const double*){})[{}] + 1e-6);\n    coef = (float)(q < 1.0 ? q "
        ": 1.0);\n  }}\n",
        o.clip, buf(o.norms), o.tensors.size());
  out += "  bool clip = coef < 1.0f;\n";
  const OptimizerTensor& first = o.tensors.front();
  TensorLoop loop{k, {{"P", &OptimizerTensor::param}, {"G", &OptimizerTensor::grad}}};
  if (first.state0 >= 0) loop.roles.push_back({"S0", &OptimizerTensor::state0});
  if (first.state1 >= 0) loop.roles.push_back({"S1", &OptimizerTensor::state1});
  if (first.copy >= 0) loop.roles.push_back({"C", &OptimizerTensor::copy});
  const bool sgd = o.algorithm == Optimizer::Algorithm::Sgd;
  // The weight decay factor of each tensor: whether :no-decay matched it.
  auto decay = [&](const OptimizerTensor& t) {
    if (sgd) return fmt::format(" wd = {};", t.decays ? sc(0) : "0.0f");
    return o.algorithm == Optimizer::Algorithm::AdamW ? fmt::format(" decay = {};", t.decays ? sc(7) : sc(8))
                                                      : std::string();
  };
  out += loop.open(sgd ? "  float wd = 0.0f;\n" : "  float decay = 1.0f;\n", decay);
  out += "    for (long long i = first; i < n; i += stride) {\n";
  out += "      float gi = G[i] + 0.0f;\n      if (clip) gi = gi * coef;\n      float p = P[i];\n";
  if (sgd) {
    out += "      float d = gi;\n      if (wd != 0.0f) d = d + wd * p;\n";
    if (first.state0 >= 0)
      out += fmt::format("      float b = {1} != 0.0f ? d : S0[i] * {0} + d;\n      S0[i] = b;\n      d = {2};\n",
                         sc(1), sc(3), o.nesterov ? fmt::format("d + {} * b", sc(1)) : "b");
    out += fmt::format("      p = p + {} * d;\n", sc(2));
  } else {
    if (o.algorithm == Optimizer::Algorithm::AdamW) out += "      p = p * decay;\n";
    out += fmt::format(
        "      float m = S0[i] * {0} + {2} * gi;\n      float v = S1[i] * {1} + {3} * gi * gi;\n"
        "      S0[i] = m;\n      S1[i] = v;\n      float denom = sqrtf(v) / {4} + {5};\n"
        "      p = p + {6} * m / denom;\n",
        sc(0), sc(1), sc(2), sc(3), sc(4), sc(5), sc(6));
  }
  out += "      P[i] = p;\n";
  if (first.copy >= 0) out += "      C[i] = sx_f32_to_bf16(p);\n";
  out += "    }\n  }\n}\n";
  return out;
}

}  // namespace sx::cuda::codegen::detail
