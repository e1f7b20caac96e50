#pragma once
// The report's charts as inline SVG, drawn here so the page needs no script
// library and no network: each series one <path> that carries its point count
// (data-points), the marks (stages, checkpoints, resumes, stops) on the step axis.
#include <string>
#include <string_view>
#include <vector>

#include "cli/report_model.h"

namespace sx::report {

// Text for HTML and SVG: control characters and bytes that are not UTF-8 made
// visible (printable()), then & < > " ' as entities, so no slug, knob value
// or file name can open a tag or leave an attribute.
std::string escape(std::string_view s);

// Tick values from lo to hi at a round step (1, 2 or 5 times a power of ten).
struct Ticks {
  double lo, hi, step;
};
Ticks nice_ticks(double lo, double hi, int target);
// A tick's label, with as many decimals as its step needs.
std::string tick_label(double v, double step);

// The chart as an <svg> element; `labels` names each run (Series::run).
std::string chart_svg(const Chart& c, const std::vector<Mark>& marks, const std::vector<std::string>& labels);

// The number of colours a series cycles through (classes r0..r7 in the page's style).
constexpr size_t kColours = 8;

}  // namespace sx::report
