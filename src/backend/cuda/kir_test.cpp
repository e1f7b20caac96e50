// The kernel IR's shape: every launch of a gpt step builds into a kernel
// whose registers are defined before use, whose buffers are exactly the
// launch's inputs and outputs, and whose stores cover every output.
#include "backend/cuda/kir.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "testing/gpt_step.h"

namespace sx::cuda::kir {
namespace {

std::unique_ptr<cpu::GptStep> gpt_step(bool bf16) {
  return cpu::gpt_step({.batch = 2, .seq = 8, .vocab = 32, .d = 16, .heads = 2, .layers = 1}, bf16);
}

bool contains(const std::vector<NodeId>& v, NodeId x) { return std::find(v.begin(), v.end(), x) != v.end(); }

void check_kernel(const Graph& g, const Launch& l, const Kernel& k) {
  std::vector<bool> defined(k.regs.size(), false);
  std::vector<NodeId> stored;
  for (const Stmt& s : k.body) {
    for (Reg a : s.args) EXPECT_TRUE(a < defined.size() && defined[a]) << l.name << ": a register used before set";
    if (s.access.ids != kNoReg) EXPECT_TRUE(defined[s.access.ids]) << l.name;
    if (s.kind == StmtKind::Store || s.kind == StmtKind::ScatterAdd) {
      EXPECT_EQ(s.access.view.numel(), k.spaces[s.space].numel()) << l.name;
      stored.push_back(s.node);
    } else {
      ASSERT_LT(s.out, defined.size()) << l.name;
      EXPECT_FALSE(defined[s.out]) << l.name << ": a register set twice";
      defined[s.out] = true;
      if (s.kind == StmtKind::Load) EXPECT_EQ(s.access.view.numel(), k.spaces[s.space].numel()) << l.name;
    }
  }
  for (NodeId o : l.outputs) EXPECT_TRUE(contains(stored, o)) << l.name << ": output %" << o << " not stored";
  for (const Buffer& b : k.buffers) {
    if (b.source != Source::Value) continue;
    if (b.written)
      EXPECT_TRUE(contains(l.outputs, b.node)) << l.name << ": writes %" << b.node;
    else
      EXPECT_TRUE(contains(l.inputs, b.node)) << l.name << ": reads %" << b.node << " " << op_name(g.node(b.node).op);
  }
}

TEST(Kir, EveryLaunchOfAGptStepBuilds) {
  for (bool bf16 : {false, true}) {
    auto s = gpt_step(bf16);
    Lowering low = lower(s->g, s->plan, bf16 ? Precision::bf16 : Precision::f32);
    int kernels = 0, gemms = 0;
    for (const Launch& l : low.launches) {
      if (l.cublas()) {
        Launch rest;
        gemms += static_cast<int>(build_gemms(s->g, s->plan, l, &rest).size());
        if (!rest.nodes.empty()) check_kernel(s->g, rest, build(s->g, s->plan, rest));
        continue;
      }
      SCOPED_TRACE(l.name);
      try {
        check_kernel(s->g, l, build(s->g, s->plan, l));
      } catch (const std::exception& e) {
        std::string what;
        for (NodeId id : l.nodes)
          what += fmt::format("  %{} {} {} <- ", id, op_name(s->g.node(id).op), s->g.node(id).shape.str()),
              what += [&] {
                std::string t;
                for (NodeId in : s->g.node(id).inputs) t += fmt::format("%{}{} ", in, s->g.node(in).shape.str());
                return t;
              }() + "\n";
        ADD_FAILURE() << l.name << " domain " << l.domain.str() << ": " << e.what() << "\n" << what;
      }
      ++kernels;
    }
    EXPECT_GT(kernels, 5);
    EXPECT_GE(gemms, low.cublas());
  }
}

TEST(Kir, Bf16PointsAreBf16Buffers) {
  auto s = gpt_step(true);
  Lowering low = lower(s->g, s->plan, Precision::bf16);
  int bf16_buffers = 0, bf16_gemm_operands = 0;
  for (const Launch& l : low.launches) {
    if (l.cublas()) {
      Launch rest;
      for (const Gemm& c : build_gemms(s->g, s->plan, l, &rest)) {
        bf16_gemm_operands += (c.type_a == Type::bf16) + (c.type_b == Type::bf16);
        EXPECT_EQ(c.compute, GemmCompute::bf16);
      }
      continue;
    }
    for (const Buffer& b : build(s->g, s->plan, l).buffers) {
      bool rounded = b.source == Source::ParamCopy || s->g.node(b.node).op == Op::RoundBf16;
      EXPECT_EQ(b.type == Type::bf16, rounded) << l.name;
      bf16_buffers += b.type == Type::bf16;
    }
  }
  EXPECT_GT(bf16_buffers, 0);
  EXPECT_GT(bf16_gemm_operands, 0);
}

}  // namespace
}  // namespace sx::cuda::kir
