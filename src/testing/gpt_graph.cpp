#include "testing/gpt_graph.h"

#include <string>

#include "graph/build.h"

namespace sx::cpu {

namespace {

using namespace ops;

NodeId linear(Graph& g, const std::string& path, NodeId x, int64_t in, int64_t out, bool bias = true) {
  NodeId y = matmul(g, x, param(g, path + ".w", {in, out}, {Init::Normal, 0.02}));
  return bias ? add(g, y, param(g, path + ".b", {out}, {})) : y;
}

NodeId norm(Graph& g, const std::string& path, NodeId x, int64_t d) {
  return layer_norm(g, x, param(g, path + ".g", {d}, {Init::Ones}), param(g, path + ".b", {d}, {}));
}

NodeId attn(Graph& g, const std::string& p, NodeId x, const GptShape& s) {
  int64_t dh = s.d / s.heads;
  auto heads = [&](NodeId t) {
    return permute(g, reshape(g, t, {s.batch, s.seq, s.heads, dh}), {0, 2, 1, 3});
  };
  NodeId q = heads(linear(g, p + ".wq", x, s.d, s.d));
  NodeId k = heads(linear(g, p + ".wk", x, s.d, s.d));
  NodeId v = heads(linear(g, p + ".wv", x, s.d, s.d));
  NodeId o = attention(g, q, k, v, true);
  o = reshape(g, permute(g, o, {0, 2, 1, 3}), {s.batch, s.seq, s.d});
  return linear(g, p + ".wo", o, s.d, s.d);
}

}  // namespace

GptGraph build_gpt(Graph& g, const GptShape& s) {
  GptGraph out;
  out.tokens = input(g, "tokens", {s.batch, s.seq}, DType::I32);
  out.targets = input(g, "targets", {s.batch, s.seq}, DType::I32);
  NodeId x = add(g, embed(g, out.tokens, param(g, "embed.w", {s.vocab, s.d}, {Init::Normal, 0.02})),
                 param(g, "pos.w", {s.seq, s.d}, {Init::Normal, 0.02}));
  for (int64_t i = 0; i < s.layers; ++i) {
    std::string b = "blocks." + std::to_string(i);
    x = add(g, x, attn(g, b + ".attn", norm(g, b + ".ln1", x, s.d), s));
    NodeId h = gelu(g, linear(g, b + ".mlp.fc", norm(g, b + ".ln2", x, s.d), s.d, 4 * s.d));
    x = add(g, x, linear(g, b + ".mlp.proj", h, 4 * s.d, s.d));
  }
  NodeId logits = linear(g, "head", norm(g, "ln-f", x, s.d), s.d, s.vocab, false);
  out.loss = cross_entropy(g, logits, out.targets);
  return out;
}

}  // namespace sx::cpu
