#include "backend/cpu/executor.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "backend/cpu/gemm.h"
#include "backend/cpu/vmath.h"
#include "util/error.h"
#include "util/memory.h"

namespace sx::cpu {

namespace {

// How a bf16-typed value is emulated: rounded after each op (as the reference).
void round_bf16(float* v, int64_t count) {
  for (int64_t k = 0; k < count; ++k) v[k] = round_bf16_f(v[k]);
}

}  // namespace

bool holds_bf16_values(const Graph& g, NodeId id) {
  for (;;) {
    const Node& n = g.node(id);
    if (n.op == Op::RoundBf16 || n.dtype == DType::BF16) return true;
    bool moves =
        plan::is_alias_op(n.op) || n.op == Op::Permute || n.op == Op::Slice || n.op == Op::Expand || n.op == Op::Pad;
    if (!moves || n.inputs.size() != 1 || n.dtype != DType::F32) return false;
    id = n.inputs[0];
  }
}

CpuExecutor::CpuExecutor(const Graph& g, const plan::Plan& plan, int threads) : g_(g), plan_(plan), pool_(threads) {
  size_t bytes = static_cast<size_t>(std::max<int64_t>(plan_.arena_bytes, plan::kAlign));
  static_assert(kHugePageBytes % plan::kAlign == 0);
  arena_ = static_cast<char*>(allocate_huge_pages(bytes));
  SX_ASSERT(arena_, "cannot allocate the arena");
  std::memset(arena_, 0, bytes);
  ptr_.assign(g.size(), nullptr);
  param_data_.assign(g.size(), nullptr);
  int64_t scratch = 0, shared = 0;
  steps_.reserve(plan_.schedule.size());
  for (NodeId id : plan_.schedule) {
    const Node& n = g.node(id);
    Step s{id, {}, std::vector<const void*>(n.inputs.size()), true};
    s.compute = !(plan_.view[id] || n.op == Op::Param || n.op == Op::Input);
    if (s.compute) prepare(g, id, s.prep);
    if (n.op == Op::Matmul) {
      for (int k = 0; k < 2; ++k) s.prep.trans[k] = plan_.view[n.inputs[k]] && plan::is_transpose(g.node(n.inputs[k]));
      plan_matmul(g, n, s.prep);
    }
    // A product of two bf16 operands is the bf16 product (gemm.h); inside
    // attention, the scores q . k^T.
    if (n.op == Op::Matmul || n.op == Op::Attention)
      s.prep.bf16 = holds_bf16_values(g, n.inputs[0]) && holds_bf16_values(g, n.inputs[1]);
    scratch = std::max(scratch, s.prep.scratch_floats);
    shared = std::max(shared, s.prep.shared_floats);
    steps_.push_back(std::move(s));
  }
  skip_idempotent_rounds();
  scratch = std::max(scratch, fuse_pairs());
  scratch = std::max(scratch, fuse_attention_grads());
  fuse_norm_grads();
  fuse_into_products();
  fuse_column_sums();
  fold_head_permutes();
  skip_operand_rounds();
  fuse_output_rounds();
  if (staging_floats_ > 0) staging_.reset(new float[staging_floats_]);
  for (int t = 0; t < pool_.size(); ++t) {
    scratch_.emplace_back(new float[std::max<int64_t>(scratch, 1)]);
    scratch_ptrs_.push_back(scratch_.back().get());
  }
  shared_.reset(new float[std::max<int64_t>(shared, 1)]);
  resolve_pointers();
}

CpuExecutor::~CpuExecutor() { std::free(arena_); }

void CpuExecutor::resolve_pointers() {
  for (NodeId id : plan_.schedule) {
    NodeId root = plan_.storage[id];
    ptr_[id] =
        plan_.offset[id] >= 0 ? static_cast<void*>(arena_ + plan_.offset[id]) : const_cast<float*>(param_data_[root]);
  }
  for (const Redirect& r : redirects_) ptr_[r.node] = ptr_[r.to];
  for (Step& s : steps_)
    for (size_t k = 0; k < s.ins.size(); ++k) s.ins[k] = ptr_[g_.node(s.id).inputs[k]];
}

void CpuExecutor::bind_param(const std::string& path, const float* data) {
  NodeId id = g_.find_param(path);
  if (id == kNoNode || plan_.position[id] < 0) return;
  param_data_[id] = data;
  resolve_pointers();
}

void* CpuExecutor::input(const std::string& name) {
  NodeId id = g_.find_input(name);
  if (id == kNoNode || plan_.position[id] < 0) return nullptr;
  return ptr_[id];
}

void CpuExecutor::run(const Feeds& feeds) {
  bool rebind = false;
  for (const auto& [path, id] : g_.params()) {
    if (plan_.position[id] < 0) continue;
    auto it = feeds.params.find(path);
    SX_ASSERT(it != feeds.params.end(), "no value fed for param " + path);
    rebind = rebind || param_data_[id] != it->second;
    param_data_[id] = it->second;
  }
  if (rebind) resolve_pointers();
  for (const auto& [name, id] : g_.inputs()) {
    if (plan_.position[id] < 0) continue;
    auto it = feeds.inputs.find(name);
    SX_ASSERT(it != feeds.inputs.end(), "no value fed for input " + name);
    int64_t count = g_.node(id).shape.numel();
    if (count > 0) std::memcpy(ptr_[id], it->second, count * 4);  // an empty input may have no data
  }
  run(feeds.rng_offset);
}

void CpuExecutor::run(uint64_t rng_offset) {
  for (Step& s : steps_) {
    const Node& n = g_.node(s.id);
    if (n.op == Op::Param) SX_ASSERT(param_data_[s.id], "param " + n.path + " is not bound");
    if (n.op == Op::Input && n.dtype == DType::BF16) round_bf16(static_cast<float*>(ptr_[s.id]), n.shape.numel());
    if (!s.compute) continue;
    if (!profiling_) {
      execute(s, rng_offset);
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    execute(s, rng_offset);
    // A region of attention's backward counts as attention, a layer-norm's as layer-norm.
    Op op = s.region >= 0 ? Op::Attention : s.norm_region >= 0 ? Op::LayerNorm : n.op;
    op_seconds_[static_cast<int>(op)] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
}

const Gemm* CpuExecutor::product_extras(const Step& s, Gemm& then) const {
  then.round_output = s.round_step != 0;
  if (s.then_step) {
    const Step& t = (&s)[s.then_step];
    const Node& tn = g_.node(t.id);
    if (tn.op == Op::Add) {  // the product's output is input `then_slot` of the add
      then.then = s.then_slot == 0 ? Gemm::Then::AddAfter : Gemm::Then::AddBefore;
      then.then_x = static_cast<const float*>(t.ins[1 - s.then_slot]);
    } else {
      then.then = tn.op == Op::Gelu ? Gemm::Then::Gelu : Gemm::Then::GeluGradMul;
      then.then_x = then.then == Gemm::Then::Gelu ? nullptr : static_cast<const float*>((&t)[-1].ins[0]);
    }
    then.then_out = static_cast<float*>(ptr_[t.id]);
    then.ldo = tn.shape.back();
  }
  if (s.colsum_step) then.colsum = static_cast<float*>(ptr_[(&s)[s.colsum_step].id]);
  then.colsum_rounded = s.colsum_rounded;
  return s.round_step || s.then_step || s.colsum_step ? &then : nullptr;
}

void CpuExecutor::execute(Step& s, uint64_t rng_offset) {
  if (s.region >= 0) return run_attention_grad_region(attention_grads_[s.region], rng_offset);
  if (s.norm_region >= 0) return run_norm_grad_region(norm_grads_[s.norm_region]);
  const Node& n = g_.node(s.id);
  Args a{n, g_, s.ins.data(), ptr_[s.id], s.prep, pool_, scratch_ptrs_.data(), shared_.get(), rng_offset};
  Gemm extras;
  const Gemm* then_at = product_extras(s, extras);
  if (s.fuse == Fuse::MatmulBias)
    return run_matmul(a, static_cast<const float*>((&s)[s.fuse_next].ins[1 - s.fuse_slot]), then_at);
  if (s.fuse == Fuse::GeluGradMul || s.fuse == Fuse::Binary || s.fuse == Fuse::BinaryScale ||
      s.fuse == Fuse::WhereSoftmax || s.fuse == Fuse::MulReduce) {
    const Step& t = (&s)[1];
    Args b{g_.node(t.id), g_, t.ins.data(), ptr_[t.id], t.prep, pool_, scratch_ptrs_.data(), shared_.get(), rng_offset};
    if (s.fuse == Fuse::WhereSoftmax) return run_where_softmax(a, b);
    if (s.fuse == Fuse::MulReduce) return run_mul_reduce(a, b);
    if (s.fuse == Fuse::GeluGradMul) return run_unary_binary(a, b, s.fuse_slot);
    return run_binary_binary(a, b, s.fuse_slot, s.fuse == Fuse::BinaryScale ? &s.fuse_scale : nullptr);
  }
  switch (op_kind(n.op)) {
    case OpKind::Leaf:
      run_leaf(a);
      break;
    case OpKind::Unary:
    case OpKind::Binary:
    case OpKind::Ternary:
      run_elementwise(a);
      break;
    case OpKind::Matrix:
      run_matmul(a, nullptr, then_at);
      break;
    case OpKind::Reduce:
      run_reduce(a);
      break;
    case OpKind::Shape:
      run_shape(a);
      break;
    case OpKind::Fused:
    case OpKind::Control:
      run_fused(a);
      break;
  }
  if (n.dtype == DType::BF16) round_bf16(a.fo(), n.shape.numel());
}

ref::Tensor<float> CpuExecutor::tensor(NodeId id) const {
  const Node& n = g_.node(id);
  ref::Tensor<float> t = ref::Tensor<float>::zeros(n.dtype, n.shape);
  if (n.shape.numel() == 0) return t;  // no bytes, and maybe no pointers
  if (is_float(n.dtype))
    std::memcpy(t.f.data(), ptr_[id], t.f.size() * 4);
  else
    std::memcpy(t.i.data(), ptr_[id], t.i.size() * 4);
  return t;
}

}  // namespace sx::cpu
