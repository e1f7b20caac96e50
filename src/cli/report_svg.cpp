#include "cli/report_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/markup.h"
#include "util/printable.h"

namespace sx::report {

namespace {

// The drawing's own units; the page scales the <svg> to its width.
constexpr double kWidth = 560, kHeight = 250;
constexpr double kLeft = 58, kRight = kWidth - 22, kTop = 12, kBottom = kHeight - 34;
// Up to this many points a series also gets a dot per point, so a pass run
// every 100 steps shows where it was measured.
constexpr size_t kDotsUpTo = 60;
// A longer series is drawn by its first, lowest, highest and last point in
// each half unit of width (so at most 4 per half unit): the same picture at any
// zoom a screen shows, in a file of bounded size.
constexpr size_t kDrawnUpTo = 4000;
constexpr double kBucketsPerUnit = 2;

struct Scale {
  double d0, d1, r0, r1;
  double operator()(double v) const {
    // Halved when the domain is as wide as doubles go (-1e308..1e308), where d1 - d0 overflows.
    double f = std::isfinite(d1 - d0) ? (v - d0) / (d1 - d0) : (v * 0.5 - d0 * 0.5) / (d1 * 0.5 - d0 * 0.5);
    return r0 + f * (r1 - r0);
  }
};

std::string coord(double v) {
  std::string s = fmt::format("{:.1f}", v);
  return s == "-0.0" ? "0.0" : s;
}

const char* mark_class(Mark::Kind k) {
  switch (k) {
    case Mark::stage:
      return "m-stage";
    case Mark::checkpoint:
      return "m-checkpoint";
    case Mark::resume:
      return "m-resume";
    case Mark::stop:
      return "m-stop";
    case Mark::error:
      return "m-error";
  }
  return "";
}

// How many whole steps fit in `span` (a tick at each end of them); never more than a chart has room for.
int64_t intervals(double span, double step) {
  double n = std::floor(span / step + 1e-6);
  return std::isfinite(n) && n >= 0 ? static_cast<int64_t>(std::min(n, 40.0)) : 0;
}

// The indices of the points to draw, in order.
std::vector<size_t> drawn(const std::vector<Point>& points, const Scale& x) {
  std::vector<size_t> out;
  if (points.size() <= kDrawnUpTo) {
    for (size_t k = 0; k < points.size(); ++k) out.push_back(k);
    return out;
  }
  size_t first = 0;
  auto bucket = [&](size_t k) {
    return static_cast<int64_t>(std::floor(x(static_cast<double>(points[k].step)) * kBucketsPerUnit));
  };
  while (first < points.size()) {
    size_t last = first, lo = first, hi = first;
    while (last + 1 < points.size() && bucket(last + 1) == bucket(first)) {
      ++last;
      if (points[last].value < points[lo].value) lo = last;
      if (points[last].value > points[hi].value) hi = last;
    }
    std::vector<size_t> four = {first, lo, hi, last};
    std::sort(four.begin(), four.end());
    four.erase(std::unique(four.begin(), four.end()), four.end());
    out.insert(out.end(), four.begin(), four.end());
    first = last + 1;
  }
  return out;
}

}  // namespace

std::string escape(std::string_view s) { return escape_markup(printable(s)); }

Ticks nice_ticks(double lo, double hi, int target) {
  // A range too narrow for doubles to step through (1e6 give or take 1e-10) is drawn as one value.
  double span = std::max(std::abs(lo), std::abs(hi));
  if (!(hi - lo > span * 1e-9)) {
    double pad = span == 0 ? 1 : span * 0.1;
    lo -= pad, hi += pad;
  }
  double raw = (hi - lo) / target;
  // At the ends of doubles: a tick at each end (a step that is itself finite).
  if (!std::isfinite(raw) || !(raw > 1e-300)) return {lo, hi, std::isfinite(hi - lo) ? hi - lo : hi * 0.5 - lo * 0.5};
  double mag = std::pow(10, std::floor(std::log10(raw)));
  double f = raw / mag;
  double step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
  return {std::floor(lo / step) * step, std::ceil(hi / step) * step, step};
}

std::string tick_label(double v, double step) {
  if (std::abs(v) < step * 1e-6) v = 0;
  double biggest = std::max(std::abs(v), step);
  if (biggest >= 1e7 || step < 1e-6) {
    if (v == 0) return "0";
    // As many digits as tell this tick from the next.
    int digits = std::max(1, static_cast<int>(std::ceil(std::log10(std::abs(v) / step) - 1e-9)));
    return fmt::format("{:.{}e}", v, std::min(digits, 6));
  }
  int decimals = static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return fmt::format("{:.{}f}", v, std::max(decimals, 0));
}

std::string chart_svg(const Chart& c, const std::vector<Mark>& marks, const std::vector<std::string>& labels) {
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  for (const auto& s : c.series)
    for (const auto& p : s.points) {
      x_lo = std::min(x_lo, static_cast<double>(p.step)), x_hi = std::max(x_hi, static_cast<double>(p.step));
      y_lo = std::min(y_lo, p.value), y_hi = std::max(y_hi, p.value);
    }
  if (x_lo > x_hi) x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;  // no points (charts() leaves such a chart out)
  if (x_hi == x_lo) x_lo -= 1, x_hi += 1;
  Ticks yt = nice_ticks(y_lo, y_hi, 5);
  Ticks xt = nice_ticks(x_lo, x_hi, 6);
  xt.step = std::max(1.0, std::round(xt.step));
  Scale x{x_lo, x_hi, kLeft, kRight}, y{yt.lo, yt.hi, kBottom, kTop};

  std::string out = fmt::format(R"(<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{} against step">)",
                                kWidth, kHeight, escape(c.name));
  out += "\n<g class=\"axes\">";
  for (int64_t k = 0, n = intervals(yt.hi - yt.lo, yt.step); k <= n; ++k) {
    double v = yt.lo + static_cast<double>(k) * yt.step;
    std::string py = coord(y(v));
    out += fmt::format(R"(<line class="gridline" x1="{}" y1="{}" x2="{}" y2="{}"/>)", kLeft, py, kRight, py);
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="end" dominant-baseline="middle">{}</text>)", kLeft - 6, py,
                       escape(tick_label(v, yt.step)));
  }
  const double x_first = std::ceil(x_lo / xt.step) * xt.step;
  for (int64_t k = 0, n = intervals(x_hi - x_first, xt.step); k <= n; ++k) {
    double v = x_first + static_cast<double>(k) * xt.step;
    std::string px = coord(x(v));
    out += fmt::format(R"(<line class="axisline" x1="{}" y1="{}" x2="{}" y2="{}"/>)", px, kBottom, px, kBottom + 4);
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)", px, kBottom + 17,
                       escape(tick_label(v, xt.step)));
  }
  out += fmt::format(R"(<line class="axisline" x1="{}" y1="{}" x2="{}" y2="{}"/>)", kLeft, kBottom, kRight, kBottom);
  out += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">step</text>)", kRight, kHeight - 3);
  out += "</g>\n<g class=\"marks\">";
  for (const auto& m : marks) {
    if (m.step < x_lo || m.step > x_hi) continue;
    std::string px = coord(x(static_cast<double>(m.step)));
    std::string title = escape(labels.size() > 1 ? labels[m.run] + ": " + m.label : m.label);
    if (m.kind == Mark::checkpoint)
      out += fmt::format(R"(<path class="mark {}" d="M{} {}l-4 7h8z"><title>{}</title></path>)", mark_class(m.kind), px,
                         kBottom, title);
    else
      out += fmt::format(R"(<line class="mark {}" x1="{}" y1="{}" x2="{}" y2="{}"><title>{}</title></line>)",
                         mark_class(m.kind), px, kTop, px, kBottom, title);
  }
  out += "</g>\n<g class=\"series\">";
  for (const auto& s : c.series) {
    std::string d;
    std::vector<size_t> shown = drawn(s.points, x);
    for (size_t k : shown) {
      const Point& p = s.points[k];
      d += fmt::format("{}{} {}", d.empty() ? "M" : "L", coord(x(static_cast<double>(p.step))), coord(y(p.value)));
    }
    std::string colour = fmt::format("r{}", s.run % kColours), label = escape(labels[s.run]);
    std::string drawn_attr = shown.size() < s.points.size() ? fmt::format(" data-drawn=\"{}\"", shown.size()) : "";
    out += fmt::format(
        "\n"
        R"(<path class="line {}{}" data-run="{}" data-points="{}"{} d="{}"><title>{}</title></path>)",
        colour, s.run >= kColours ? " dashed" : "", label, s.points.size(), drawn_attr, d, label);
    if (s.points.size() <= kDotsUpTo)
      for (const auto& p : s.points)
        out += fmt::format(R"(<circle class="dot {}" cx="{}" cy="{}" r="2.4"/>)", colour,
                           coord(x(static_cast<double>(p.step))), coord(y(p.value)));
  }
  out += "</g>\n</svg>";
  return out;
}

}  // namespace sx::report
