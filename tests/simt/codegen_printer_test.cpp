// The CUDA C++ printer on every kernel the lowering makes for a small gpt
// step (f32 and bf16): each kernel printed, the program compiled as host C++
// for the SIMT shim, each launch run on the reference's values of its
// inputs, and what it stores compared with the reference's values of those
// nodes (f32 to 1e-5; bf16 buffers to one bf16 rounding).
#include <map>
#include <set>

#include "backend/cuda/codegen/print_cuda.h"
#include "backend/cuda/kir.h"
#include "backend/ref/ref.h"
#include "codegen_gpt_step.h"
#include "codegen_test_util.h"
#include "graph/build.h"

namespace sx::cuda::test {
namespace {

// The reference's value of every node: params random, i32 inputs ids in
// [0, limit) by input name.
std::vector<ref::Tensor<float>> reference(const Step& s, const std::map<std::string, int64_t>& limits) {
  ref::Feeds<float> feeds;
  uint32_t seed = 1;
  for (const auto& [path, id] : s.g.params()) {
    const Node& n = s.g.node(id);
    feeds.params[path] = ref::Tensor<float>::of(n.shape, values(n.shape.numel(), seed++, 0.5f, 0.0f));
  }
  for (const Node& n : s.g.nodes()) {
    if (n.op != Op::Input) continue;
    int64_t limit = limits.at(n.attrs.name);
    std::vector<int32_t> ids(static_cast<size_t>(n.shape.numel()));
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 7 + 3 + seed) % limit);
    feeds.inputs[n.attrs.name] = ref::Tensor<float>::ints(n.shape, ids);
  }
  return ref::evaluate(s.g, feeds);
}

// A buffer's bytes from the reference's values of what it holds.
std::vector<uint32_t> bytes_of(const Step& s, const std::vector<ref::Tensor<float>>& t, const kir::Buffer& b) {
  std::vector<float> f;
  std::vector<int32_t> ints;
  if (b.source == kir::Source::Value) {
    const ref::Tensor<float>& v = t.at(b.node);
    f = v.f, ints = v.i;
  } else {
    EXPECT_EQ(b.source, kir::Source::ParamCopy) << b.name;
    f = rounded_bf16(t.at(s.g.params().at(b.path)).f);
  }
  size_t n = static_cast<size_t>(b.shape.numel());
  std::vector<uint32_t> out((n * kir::type_bytes(b.type) + 3) / 4 + 1, 0xffffffffu);
  if (b.type == kir::Type::i32) {
    if (ints.empty())
      for (float x : f) ints.push_back(static_cast<int32_t>(x));
    EXPECT_EQ(ints.size(), n) << b.name;
    std::memcpy(out.data(), ints.data(), 4 * std::min(n, ints.size()));
  } else if (b.type == kir::Type::bf16) {
    if (f.empty()) f.assign(ints.begin(), ints.end());
    auto bits = to_bf16(f);
    EXPECT_EQ(bits.size(), n) << b.name;
    std::memcpy(out.data(), bits.data(), 2 * std::min(n, bits.size()));
  } else {
    if (f.empty()) f.assign(ints.begin(), ints.end());
    EXPECT_EQ(f.size(), n) << b.name;
    std::memcpy(out.data(), f.data(), 4 * std::min(n, f.size()));
  }
  return out;
}

std::vector<float> floats_of(const std::vector<uint32_t>& bytes, kir::Type type, size_t n) {
  std::vector<float> out(n);
  if (type == kir::Type::bf16) {
    std::vector<uint16_t> bits(n);
    std::memcpy(bits.data(), bytes.data(), 2 * n);
    return from_bf16(bits);
  }
  if (type == kir::Type::i32) {
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<int32_t>(bytes[i]));
    return out;
  }
  std::memcpy(out.data(), bytes.data(), 4 * n);
  return out;
}

// Every kernel of `s` printed, run with the shim on the reference's inputs,
// its stores compared with the reference; the kinds of kernel seen.
std::set<std::string> run_and_compare(const std::string& name, std::unique_ptr<Step> s,
                                      const std::map<std::string, int64_t>& limits) {
  std::set<std::string> kinds;
  EXPECT_GT(s->kernels.size(), 5u);
  std::vector<const kir::Kernel*> ptrs;
  for (const auto& k : s->kernels) ptrs.push_back(&k);
  std::vector<int> program_of;
  auto programs = codegen::print_programs(ptrs, 64, &program_of);
  std::vector<std::shared_ptr<simt::CudaOnCpu>> cus;
  for (size_t p = 0; p < programs.size(); ++p) {
    std::vector<kir::Kernel> in;
    for (size_t i = 0; i < ptrs.size(); ++i)
      if (program_of[i] == static_cast<int>(p)) in.push_back(*ptrs[i]);
    cus.push_back(compile_on_cpu(name + "-" + std::to_string(p), programs[p].source + wrappers(in)));
  }
  auto want = reference(*s, limits);
  for (size_t ki = 0; ki < s->kernels.size(); ++ki) {
    const kir::Kernel& k = s->kernels[ki];
    auto& cu = cus[static_cast<size_t>(program_of[ki])];
    SCOPED_TRACE(k.name);
    kinds.insert(launch_kind_name(k.kind));
    for (auto order : kOrders) {
      std::vector<std::vector<uint32_t>> memory;
      std::vector<void*> args;
      for (const kir::Buffer& b : k.buffers) {
        memory.push_back(
            b.written && !b.read
                ? std::vector<uint32_t>((b.shape.numel() * kir::type_bytes(b.type) + 3) / 4 + 1, 0x7fc00001u)
                : bytes_of(*s, want, b));
      }
      std::vector<uint64_t> scalars(k.scalars.size(), 0);  // rng_offset 0: the reference's
      for (auto& m : memory) args.push_back(m.data());
      if (!scalars.empty()) args.push_back(scalars.data());
      cu->launch("sxtest_" + k.name, {3}, {64}, order, static_cast<void* const*>(args.data()));
      int compared = 0;
      for (size_t i = 0; i < k.buffers.size(); ++i) {
        const kir::Buffer& b = k.buffers[i];
        if (!b.written || b.source != kir::Source::Value) continue;
        ++compared;
        size_t n = static_cast<size_t>(b.shape.numel());
        std::vector<float> ref_values = want.at(b.node).f;
        if (ref_values.empty()) ref_values.assign(want.at(b.node).i.begin(), want.at(b.node).i.end());
        if (b.type == kir::Type::bf16) ref_values = rounded_bf16(ref_values);
        expect_close(floats_of(memory[i], b.type, n), ref_values, b.type == kir::Type::bf16 ? 1.0 / 128 : 1e-5,
                     k.name + " " + b.name + " (" + op_name(s->g.node(b.node).op) + ")");
      }
      EXPECT_GT(compared, 0) << "the kernel stores nothing";
    }
  }
  return kinds;
}

class PrintedKernels : public ::testing::TestWithParam<bool> {};

TEST_P(PrintedKernels, EveryKernelOfAGptStepMatchesTheReference) {
  const bool bf16 = GetParam();
  const cpu::GptShape shape{.batch = 2, .seq = 8, .vocab = 32, .d = 16, .heads = 2, .layers = 1};
  auto kinds = run_and_compare(bf16 ? "gpt-bf16" : "gpt-f32", gpt_step(bf16, shape),
                               {{"tokens", shape.vocab}, {"targets", shape.vocab}});
  for (const char* kind : {"map", "row", "column", "loss", "attention", "gather", "scatter"})
    EXPECT_TRUE(kinds.count(kind)) << "no " << kind << " kernel in the step";
}

// A model using every op of ops.def (forward, and the backward autodiff
// builds: sign, gelu-grad, expand, sum-to, pad, scatter-add), lowered,
// printed and run: the printer's every statement kind and intrinsic.
std::pair<Graph, std::pair<NodeId, std::vector<NodeId>>> every_op_graph() {
  using namespace ops;
  Graph g;
  g.builtin_taps = false;
  NodeId x = param(g, "x", {2, 4, 6}, Init{}), y = param(g, "y", {2, 4, 6}, Init{});
  NodeId gain = param(g, "gain", {6}, Init{}), bias = param(g, "bias", {6}, Init{});
  NodeId table = param(g, "table", {8, 6}, Init{});
  NodeId ids = input(g, "ids", {2, 4}, DType::I32), targets = input(g, "targets", {2, 4}, DType::I32);
  std::vector<NodeId> terms;
  auto add_term = [&](NodeId t) { terms.push_back(mean_all(g, t)); };
  NodeId pos = exp(g, x);
  for (NodeId t : {neg(g, x), log(g, pos), sqrt(g, pos), rsqrt(g, pos), sin(g, x), cos(g, x), tanh(g, x), sigmoid(g, x),
                   relu(g, x), gelu(g, x), silu(g, x), abs(g, x), round_bf16(g, x)})
    add_term(t);
  add_term(add(g, x, y));
  add_term(sub(g, x, gain));
  add_term(mul(g, x, bias));
  add_term(div(g, x, add(g, pos, full(g, {1}, 1.0))));
  add_term(pow(g, pos, y));
  add_term(maximum(g, x, y));
  add_term(minimum(g, x, y));
  NodeId cmp = where(g, lt(g, x, y), x, y);
  for (NodeId c : {eq(g, x, y), ne(g, x, y), le(g, x, y), gt(g, x, y), ge(g, x, y)})
    cmp = add(g, cmp, cast(g, c, DType::F32));
  add_term(cmp);
  add_term(matmul(g, x, transpose(g, y)));
  add_term(sum(g, x, 1));
  add_term(mean(g, x, 0, true));
  add_term(max(g, x, 2));
  add_term(logsumexp(g, x, -1));
  NodeId am = cast(g, argmax(g, x, 2), DType::F32);
  NodeId iota = cast(g, arange(g, 6), DType::F32);
  add_term(mul(g, x, iota));
  add_term(permute(g, reshape(g, x, {2, 24}), {1, 0}));
  add_term(slice(g, x, 2, 1, 4));
  add_term(concat(g, {x, y}, 1));
  add_term(gather(g, table, ids, 0));
  add_term(softmax(g, x, -1));
  add_term(softmax(g, x, 1));
  add_term(log_softmax(g, x, -1));
  add_term(layer_norm(g, x, gain, bias));
  add_term(rms_norm(g, y, gain));
  add_term(attention(g, x, y, y, true, 0.5));
  NodeId logits = add(g, embed(g, ids, table), x);
  NodeId ce = cross_entropy(g, logits, targets);
  NodeId acc = accuracy(g, logits, targets);
  add_term(dropout(g, x, 0.25, 17, 3));
  add_term(stop_gradient(g, y));
  NodeId loss = ce;
  for (NodeId t : terms) loss = add(g, loss, t);
  loss = tap(g, "sum", loss);
  return {std::move(g), {loss, {acc, am, cast(g, cast(g, x, DType::I32), DType::F32)}}};
}

TEST_P(PrintedKernels, EveryOpOfOpsDefMatchesTheReference) {
  auto [g, outs] = every_op_graph();
  std::vector<bool> covered(kNumOps, false);
  for (const Node& n : g.nodes()) covered[static_cast<size_t>(n.op)] = true;
  auto s = lowered_step(std::move(g), outs.first, GetParam(), outs.second);
  for (const Node& n : s->g.nodes()) covered[static_cast<size_t>(n.op)] = true;
  for (int op = 0; op < kNumOps; ++op)
    EXPECT_TRUE(covered[static_cast<size_t>(op)]) << op_name(static_cast<Op>(op)) << " is in no case of the printer";
  run_and_compare(GetParam() ? "ops-bf16" : "ops-f32", std::move(s), {{"ids", 8}, {"targets", 6}});
}

INSTANTIATE_TEST_SUITE_P(Precisions, PrintedKernels, ::testing::Values(false, true),
                         [](const auto& info) { return std::string(info.param ? "bf16" : "f32"); });

}  // namespace
}  // namespace sx::cuda::test
