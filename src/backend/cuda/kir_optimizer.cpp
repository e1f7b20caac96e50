// The multi-tensor optimizer kernel's buffers and scalars (kir.h, Optimizer).
#include <fmt/format.h>

#include "backend/cuda/kir.h"

namespace sx::cuda::kir {

namespace {

int add_buffer(Kernel& k, Source src, const std::string& path, Type type, int64_t elements, bool written) {
  Buffer b;
  b.name = fmt::format("b{}", k.buffers.size());
  b.source = src, b.path = path, b.type = type, b.shape = Shape{elements};
  b.read = true, b.written = written;
  k.buffers.push_back(std::move(b));
  return static_cast<int>(k.buffers.size()) - 1;
}

}  // namespace

Kernel build_optimizer(const OptimizerParams& o, Optimizer::Stage stage, const std::string& name) {
  Kernel k;
  k.kind = LaunchKind::Optimizer;
  k.name = name;
  int64_t total = 0;
  for (const auto& t : o.tensors) total += t.elements;
  k.spaces.push_back(Shape{total});
  k.block = 256;
  k.grid = std::max<int64_t>(1, std::min<int64_t>((total + 1023) / 1024, 65535));
  Optimizer& opt = k.optimizer;
  opt.algorithm = o.algorithm;
  opt.stage = stage;
  opt.clip = o.clip;
  opt.nesterov = o.nesterov;
  const bool adam = o.algorithm != Optimizer::Algorithm::Sgd;
  const std::string kind = o.algorithm == Optimizer::Algorithm::AdamW ? "adamw" : "adam";
  for (OptimizerTensor t : o.tensors) {
    t.grad = add_buffer(k, Source::Gradient, t.path, Type::f32, t.elements, false);
    if (stage == Optimizer::Stage::Update) {
      t.param = add_buffer(k, Source::Param, t.path, Type::f32, t.elements, true);
      if (adam) {
        t.state0 = add_buffer(k, Source::OptimizerState, kind + ".m/" + t.path, Type::f32, t.elements, true);
        t.state1 = add_buffer(k, Source::OptimizerState, kind + ".v/" + t.path, Type::f32, t.elements, true);
      } else if (o.momentum) {
        t.state0 = add_buffer(k, Source::OptimizerState, "sgd.momentum/" + t.path, Type::f32, t.elements, true);
      }
      if (o.bf16_copies) t.copy = add_buffer(k, Source::ParamCopy, t.path, Type::bf16, t.elements, true);
    }
    opt.tensors.push_back(std::move(t));
  }
  if (stage == Optimizer::Stage::GradNorm || o.clip > 0) {
    int64_t words = 2 * (static_cast<int64_t>(o.tensors.size()) + 1);
    opt.norms = add_buffer(k, Source::Scratch, "norms", Type::i32, words, stage == Optimizer::Stage::GradNorm);
  }
  if (stage == Optimizer::Stage::Update) {
    const char* names[] = {"b1",  "b2",        "one_minus_b1", "one_minus_b2", "bc2_sqrt",
                           "eps", "step_size", "decay_on",     "decay_off"};
    const char* sgd[] = {"wd", "mom", "neg_lr", "first"};
    if (adam)
      for (const char* n : names) k.scalars.push_back({n, ScalarType::f32});
    else
      for (const char* n : sgd) k.scalars.push_back({n, ScalarType::f32});
  }
  return k;
}

}  // namespace sx::cuda::kir
