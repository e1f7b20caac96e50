// The fused ops of the kernel IR as CUDA C++: kir_intrinsics.cpp's formulas
// (the reference backend's, in f32), statistics computed once per row in
// the frame of the row's coordinates, the row's elements in order.
#include "backend/cuda/codegen/print_internal.h"

namespace sx::cuda::codegen::detail {

std::string Printer::emit_intrinsic(const Stmt& s, const Coords& c, int f) {
  const Shape& sp = k_.spaces[s.space];
  switch (s.intrinsic) {
    case Intrinsic::Softmax:
    case Intrinsic::LogSoftmax: {
      // The line along `axis` through c: its max and sum once per line.
      Coords line = c;
      line[s.axis] = "*";
      std::string key = "softmax" + std::to_string(s.out) + "@";
      for (const auto& x : line) key += x + ",";
      Coords outer = c;
      outer[s.axis] = "0";
      int fl = frames_.deepest(outer);
      std::string m, sum;
      if (const std::string* found = frames_.find(fl, key)) {
        m = *found;
        sum = *frames_.find(fl, key + "sum");
      } else {
        m = def(fl, "float", "sx_neg_inf()");
        sum = def(fl, "float", "0.0f");
        for (int pass = 0; pass < 2; ++pass) {
          Coords lc = outer;
          int inner = loops(fl, sp, {s.axis}, lc);
          std::string x = arg(s, 0, lc);
          frames_.line(inner, pass == 0 ? fmt::format("{0} = {1} > {0} ? {1} : {0};", m, x)
                                        : fmt::format("{} += expf({} - {});", sum, x, m));
          close_loops(inner, fl);
        }
        frames_.remember(fl, key, m);
        frames_.remember(fl, key + "sum", sum);
      }
      std::string x = arg(s, 0, c);
      return def(f, "float",
                 s.intrinsic == Intrinsic::Softmax ? fmt::format("expf({} - {}) / {}", x, m, sum)
                                                   : fmt::format("{} - {} - logf({})", x, m, sum));
    }
    case Intrinsic::LayerNorm:
    case Intrinsic::RmsNorm:
      return emit_norm(s, c, f);
    case Intrinsic::CrossEntropyRow:
    case Intrinsic::AccuracyRow:
      return emit_row_loss(s, c, f);
    case Intrinsic::Dropout: {
      std::string lin = "0ULL";
      for (int d = 0; d < sp.rank; ++d)
        if (sp[d] != 1) lin = fmt::format("({} * {}ULL + (unsigned long long){})", lin, sp[d], c[d]);
      std::string offset = "0ULL";
      for (const ScalarParam& p : k_.scalars)
        if (p.name == "rng_offset") offset = scalar_name(p);
      std::string x = arg(s, 0, c);
      return def(f, "float",
                 fmt::format("sx_keep({}ULL, {}u, {}, {}, {:.17g}) ? {} * {} : 0.0f", s.seed, s.stream, offset, lin,
                             s.value, x, f32_literal(1.0 / (1.0 - s.value))));
    }
    case Intrinsic::Attention:
      return emit_attention(s, c, f);
    default:
      SX_ASSERT(false, "codegen: an intrinsic it does not know");
  }
  return "";
}

// (x - mean) * rstd * gain + bias over the last axis (RMS norm: mean 0, bias 0).
std::string Printer::emit_norm(const Stmt& s, const Coords& c, int f) {
  const Shape& sp = k_.spaces[s.space];
  bool ln = s.intrinsic == Intrinsic::LayerNorm;
  int last = sp.rank - 1;
  Coords row = c;
  row[last] = "0";
  int fr = frames_.deepest(row);
  std::string key = "norm" + std::to_string(s.out) + "@";
  for (int d = 0; d < last; ++d) key += row[d] + ",";
  std::string mu, rstd;
  if (const std::string* found = frames_.find(fr, key)) {
    mu = *found;
    rstd = *frames_.find(fr, key + "rstd");
  } else {
    int64_t d = sp[last];
    mu = def(fr, "float", "0.0f");
    if (ln) {
      Coords lc = row;
      int inner = loops(fr, sp, {last}, lc);
      frames_.line(inner, fmt::format("{} += {};", mu, arg(s, 0, lc)));
      close_loops(inner, fr);
      frames_.line(fr, fmt::format("{0} = {0} / (float){1}LL;", mu, d));
    }
    std::string var = def(fr, "float", "0.0f");
    Coords lc = row;
    int inner = loops(fr, sp, {last}, lc);
    std::string x = arg(s, 0, lc);
    frames_.line(inner, fmt::format("{0} += ({1} - {2}) * ({1} - {2});", var, x, mu));
    close_loops(inner, fr);
    rstd = def(fr, "float", fmt::format("1.0f / sqrtf({} / (float){}LL + {})", var, d, f32_literal(s.value)));
    frames_.remember(fr, key, mu);
    frames_.remember(fr, key + "rstd", rstd);
  }
  std::string x = arg(s, 0, c), gain = arg(s, 1, c);
  std::string bias = ln ? arg(s, 2, c) : "0.0f";
  return def(f, "float", fmt::format("({} - {}) * {} * {} + {}", x, mu, rstd, gain, bias));
}

// Cross-entropy (logsumexp - logit[target]) or accuracy (first argmax ==
// target) of the row at c of the row space; a target out of range is NaN.
std::string Printer::emit_row_loss(const Stmt& s, const Coords& c, int f) {
  const Shape& ls = space_of(s.args[0]);
  int last = ls.rank - 1;
  int64_t vocab = ls[last];
  Coords row = broadcast(c, k_.spaces[s.space], ls);
  row[last] = "0";
  int fr = frames_.deepest(row);
  std::string t = arg(s, 1, c);
  std::string m = def(fr, "float", "sx_neg_inf()"), best = def(fr, "long long", "0");
  {
    Coords lc = row;
    int inner = loops(fr, ls, {last}, lc);
    std::string l = value(s.args[0], lc);
    frames_.line(inner, fmt::format("if ({1} > {0}) {{ {0} = {1}; {2} = {3}; }}", m, l, best, lc[last]));
    close_loops(inner, fr);
  }
  std::string valid = fmt::format("({0} >= 0 && {0} < {1}LL)", t, vocab);
  if (s.intrinsic == Intrinsic::AccuracyRow)
    return def(f, "float", fmt::format("{} ? ({} == (long long){} ? 1.0f : 0.0f) : sx_nan()", valid, best, t));
  std::string sum = def(fr, "float", "0.0f");
  {
    Coords lc = row;
    int inner = loops(fr, ls, {last}, lc);
    frames_.line(inner, fmt::format("{} += expf({} - {});", sum, value(s.args[0], lc), m));
    close_loops(inner, fr);
  }
  // The target's logit: the logits' value at column t (clamped so that an
  // invalid target reads a valid element; its row is NaN anyway).
  std::string col = frames_.var(fr, "t");
  frames_.line(fr, fmt::format("long long {} = {} ? (long long){} : 0LL;", col, valid, t));
  Coords tc = row;
  tc[last] = col;
  std::string lt = value(s.args[0], tc);
  return def(f, "float", fmt::format("{} ? {} + logf({}) - {} : sx_nan()", valid, m, sum, lt));
}

// softmax(q k^T * scale, masked when causal) v at c = (..., i, col): the
// row's max and sum once per (..., i), then the column's sum over keys.
std::string Printer::emit_attention(const Stmt& s, const Coords& c, int f) {
  const Shape& os = k_.spaces[s.space];
  const Shape &qs = space_of(s.args[0]), &ks = space_of(s.args[1]), &vs = space_of(s.args[2]);
  int r = os.rank;
  int64_t tq = qs[qs.rank - 2], tk = ks[ks.rank - 2], d = qs.back();
  Coords row = c;
  row[r - 1] = "0";
  int fr = frames_.deepest(row);
  // The score of key j for the row (a frame where j is defined).
  auto score = [&](int in, const std::string& j) {
    Coords qc = broadcast(row, os, qs), kc = broadcast(row, os, ks);
    kc[ks.rank - 2] = j;
    std::string acc = def(in, "float", "0.0f");
    auto [l, lf] = loop(in, d);
    qc[qs.rank - 1] = l;
    kc[ks.rank - 1] = l;
    std::string qv = value(s.args[0], qc);  // printed in this order, whatever the compiler's order of arguments
    std::string kv = value(s.args[1], kc);
    frames_.line(lf, fmt::format("{} += {} * {};", acc, qv, kv));
    frames_.close(lf);
    std::string masked = s.causal ? fmt::format("{} > {} + {}LL", j, c[r - 2], tk - tq) : "false";
    return def(in, "float", fmt::format("{} ? sx_neg_inf() : {} * {}", masked, acc, f32_literal(s.value)));
  };
  std::string key = "attention" + std::to_string(s.out) + "@";
  for (int dd = 0; dd < r - 1; ++dd) key += row[dd] + ",";
  std::string m, sum;
  if (const std::string* found = frames_.find(fr, key)) {
    m = *found;
    sum = *frames_.find(fr, key + "sum");
  } else {
    m = def(fr, "float", "sx_neg_inf()");
    sum = def(fr, "float", "0.0f");
    auto [j1, f1] = loop(fr, tk);
    frames_.line(f1, fmt::format("{0} = {1} > {0} ? {1} : {0};", m, score(f1, j1)));
    frames_.close(f1);
    auto [j2, f2] = loop(fr, tk);
    frames_.line(f2, fmt::format("{} += expf({} - {});", sum, score(f2, j2), m));
    frames_.close(f2);
    frames_.remember(fr, key, m);
    frames_.remember(fr, key + "sum", sum);
  }
  std::string acc = def(f, "float", "0.0f");
  auto [j, fj] = loop(f, tk);
  std::string p = def(fj, "float", fmt::format("expf({} - {}) / {}", score(fj, j), m, sum));
  Coords vc = broadcast(c, os, vs);
  vc[vs.rank - 2] = j;
  frames_.line(fj, fmt::format("{} += {} * {};", acc, p, value(s.args[2], vc)));
  frames_.close(fj);
  return acc;
}

}  // namespace sx::cuda::codegen::detail
