#include "plan/plan.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <random>

#include "graph/build.h"

namespace sx::plan {
namespace {

using namespace ops;

// Checks a plan against the graph by brute force over all pairs of nodes:
// two nodes whose values must both be intact at some position never share
// bytes, unless the later one is a view of, or was written in place over, the
// earlier one after it died.
void check(const Graph& g, const Plan& p) {
  const int32_t end = static_cast<int32_t>(p.schedule.size());
  std::vector<int32_t> def(g.size(), -1), last(g.size(), -1);
  for (NodeId id : p.schedule) {
    def[id] = g.node(id).op == Op::Input ? 0 : p.position[id];
    last[id] = std::max(last[id], def[id]);
    for (NodeId in : g.node(id).inputs) last[in] = std::max(last[in], p.position[id]);
  }
  for (NodeId o : p.outputs) last[o] = end;
  for (NodeId id : p.schedule)
    if (g.node(id).op == Op::Input) last[id] = end;
  for (NodeId id : p.schedule) {
    EXPECT_NE(p.storage[id], kNoNode);
    if (g.node(id).op == Op::Param) {
      EXPECT_EQ(p.offset[id], -1);
    }
    if (p.offset[id] < 0) continue;
    EXPECT_EQ(p.offset[id] % kAlign, 0);
    EXPECT_LE(p.offset[id] + g.node(id).shape.numel() * 4, p.arena_bytes);
  }
  auto bytes = [&](NodeId n) { return g.node(n).shape.numel() * 4; };
  for (NodeId a : p.schedule)
    for (NodeId b : p.schedule) {
      if (a >= b || p.offset[a] < 0 || p.offset[b] < 0) continue;
      bool mem = p.offset[a] < p.offset[b] + bytes(b) && p.offset[b] < p.offset[a] + bytes(a);
      bool time = def[a] <= last[b] && def[b] <= last[a];
      if (!mem || !time) continue;
      if (p.storage[a] != p.storage[b]) {
        ADD_FAILURE() << "%" << a << " and %" << b << " overlap while both live\n" << dump(g);
        continue;
      }
      if (p.view[b]) continue;  // a view writes nothing
      // b wrote over a's bytes: a must die at b, read by b itself.
      bool reads = false;
      for (NodeId in : g.node(b).inputs) reads = reads || p.storage[in] == p.storage[a];
      EXPECT_TRUE(last[a] == def[b] && reads) << "%" << b << " overwrote %" << a << " while live";
    }
}

TEST(Plan, ChainRunsInPlaceAndPrunes) {
  Graph g;
  NodeId x = input(g, "x", {4, 8}, DType::F32);
  NodeId w = param(g, "w", {8}, {});
  NodeId e = exp(g, x);            // x is an input: never overwritten
  NodeId n = neg(g, e);            // e dies here: in place
  NodeId a = add(g, n, w);         // n dies here: in place
  NodeId unused = sin(g, a);       // not needed by the output
  NodeId r = reshape(g, a, {32});  // a view
  NodeId s = sum(g, r, 0);
  Plan p = make_plan(g, {s});
  check(g, p);
  EXPECT_EQ(p.position[unused], -1);
  EXPECT_EQ(p.offset[unused], -1);
  EXPECT_EQ(p.storage[n], e);
  EXPECT_EQ(p.storage[a], e);
  EXPECT_EQ(p.storage[r], e);
  EXPECT_NE(p.storage[e], x);
  EXPECT_EQ(p.offset[w], -1);
  EXPECT_EQ(p.in_place, 2);
  EXPECT_EQ(p.aliases, 1);
  EXPECT_LE(p.arena_bytes, p.total_bytes);
  auto big = p.largest(2);
  ASSERT_EQ(big.size(), 2u);
  EXPECT_EQ(big[0].second, 128);
}

TEST(Plan, CheckerCatchesOverlap) {
  Graph g;
  NodeId x = input(g, "x", {16}, DType::F32);
  NodeId a = exp(g, x);
  NodeId b = neg(g, a);
  Plan p = make_plan(g, {a, b});
  p.offset[b] = p.offset[a];  // both are outputs: live together
  EXPECT_NONFATAL_FAILURE(check(g, p), "overlap while both live");
}

TEST(Plan, TransposesReadOnlyByMatmulsAreFolded) {
  Graph g;
  NodeId x = input(g, "x", {3, 5, 4}, DType::F32);
  NodeId w = param(g, "w", {5, 4}, {});
  NodeId wt = transpose(g, w);  // only a matmul reads it: folded
  NodeId xt = transpose(g, x);  // also read by exp: materialised
  NodeId y = matmul(g, matmul(g, x, wt), x);
  NodeId z = matmul(g, xt, x);
  Plan p = make_plan(g, {sum_all(g, y), sum_all(g, z), sum_all(g, exp(g, xt))});
  check(g, p);
  EXPECT_TRUE(p.view[wt]);
  EXPECT_EQ(p.offset[wt], -1);  // a view of a param
  EXPECT_FALSE(p.view[xt]);
}

TEST(Plan, OutputsLiveToTheEndAndAreNotOverwritten) {
  Graph g;
  NodeId x = input(g, "x", {16}, DType::F32);
  NodeId a = exp(g, x);
  NodeId b = neg(g, a);  // a is an output: b may not take its buffer
  Plan p = make_plan(g, {a, b});
  check(g, p);
  EXPECT_NE(p.storage[b], p.storage[a]);
  EXPECT_EQ(p.last[p.storage[a]], static_cast<int32_t>(p.schedule.size()));
}

TEST(Plan, DeadBuffersAreReused) {
  Graph g;
  NodeId x = input(g, "x", {64, 64}, DType::F32);
  NodeId w = param(g, "w", {64, 64}, {});
  NodeId h = x;
  for (int i = 0; i < 6; ++i) h = matmul(g, h, w);  // matmul never runs in place
  Plan p = make_plan(g, {sum_all(g, h)});
  check(g, p);
  // x, and two matmul buffers alternating, plus the tiny sum.
  EXPECT_LE(p.arena_bytes, 3 * 64 * 64 * 4 + kAlign);
  EXPECT_LT(p.arena_bytes, p.total_bytes);
}

// Random graphs of elementwise, broadcasting, matmul, reduction and view ops.
Graph random_graph(uint32_t seed, std::vector<NodeId>* outputs) {
  std::mt19937 rng(seed);
  Graph g;
  std::vector<NodeId> pool;
  pool.push_back(input(g, "x", {6, 10}, DType::F32));
  pool.push_back(param(g, "w", {10, 10}, {}));
  pool.push_back(param(g, "b", {10}, {}));
  auto pick = [&] { return pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)]; };
  auto of_shape = [&](const Shape& s) {
    std::vector<NodeId> c;
    for (NodeId n : pool)
      if (g.node(n).shape == s) c.push_back(n);
    return c.empty() ? kNoNode : c[std::uniform_int_distribution<size_t>(0, c.size() - 1)(rng)];
  };
  for (int i = 0; i < 60; ++i) {
    NodeId a = pick();
    const Shape s = g.node(a).shape;
    NodeId made = kNoNode;
    switch (rng() % 7) {
      case 0:
        made = exp(g, a);
        break;
      case 1:
        made = neg(g, a);
        break;
      case 2: {
        NodeId b = of_shape(s);
        made = b == kNoNode ? tanh(g, a) : mul(g, a, b);
        break;
      }
      case 3:
        if (s.rank == 2 && s[1] == 10) made = add(g, a, pool[2]);
        break;
      case 4:
        if (s.rank == 2 && s[1] == 10) made = matmul(g, a, pool[1]);
        break;
      case 5:
        made = reshape(g, a, {s.numel()});
        break;
      case 6:
        if (s.rank == 2) made = softmax(g, a);
        break;
    }
    if (made != kNoNode) pool.push_back(made);
  }
  for (int i = 0; i < 3; ++i) outputs->push_back(sum_all(g, pick()));
  return g;
}

TEST(Plan, RandomGraphsAreSoundAndDeterministic) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    std::vector<NodeId> outs;
    Graph g = random_graph(seed, &outs);
    Plan p = make_plan(g, outs);
    check(g, p);
    EXPECT_LE(p.arena_bytes, p.total_bytes);
    Plan again = make_plan(g, outs);
    EXPECT_EQ(p.offset, again.offset);
    EXPECT_EQ(p.storage, again.storage);
    Plan plain = make_plan(g, outs, {.in_place = false, .alias = false, .fold_transpose = false});
    check(g, plain);
    EXPECT_EQ(plain.in_place + plain.aliases, 0);
  }
}

}  // namespace
}  // namespace sx::plan
