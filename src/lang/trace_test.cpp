#include "lang/trace.h"

#include <gtest/gtest.h>

#include <fstream>

#include "lang/frontend.h"
#include "util/big_stack.h"

namespace sx {
namespace {

std::string source_dir() {
  const char* d = std::getenv("SEXPGPU_SOURCE_DIR");
  return d ? d : SEXPGPU_SOURCE_DIR_DEFAULT;
}

TEST(Trace, ExampleGptHasTheSpecModelPaths) {
  run_with_big_stack([] {
    Selection sel;
    auto in = load_experiment(source_dir() + "/examples/my-run.sx", sel, 10'000'000);
    const Experiment& x = in->experiment();
    TracedModel t = trace_model(*in, *x.run->loader, 4, true);
    const auto& params = t.graph.params();
    std::vector<std::string> want = {"embed.w", "pos.w", "blocks.0.ln1.g", "blocks.0.ln1.b",
                                     "blocks.0.attn.wq.w", "blocks.0.attn.wq.b", "blocks.0.attn.wo.w",
                                     "blocks.0.mlp.fc.w", "blocks.0.mlp.proj.b", "blocks.1.ln2.g",
                                     "ln-f.g", "ln-f.b", "head.w"};
    for (const auto& p : want) EXPECT_TRUE(params.count(p)) << p;
    EXPECT_EQ(params.size(), 4u + 2u * 16u + 1u);  // embed, pos, ln-f.g/b, head; 16 per block
    EXPECT_EQ(t.graph.node(params.at("embed.w")).shape.str(), "[32,32]");
    EXPECT_EQ(t.graph.node(params.at("blocks.0.mlp.fc.w")).shape.str(), "[32,128]");
    EXPECT_EQ(t.graph.node(t.loss).shape.rank, 0);
  });
}

}  // namespace
}  // namespace sx
