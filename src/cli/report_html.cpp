#include "cli/report_html.h"

#include <fmt/format.h>

#include <map>

#include "cli/report_svg.h"
#include "util/version.h"

namespace sx::report {

namespace {

// Light by default, dark when the reader's system asks for it; the series'
// colours are picked to read on both backgrounds.
constexpr const char* kStyle =
    R"(:root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--muted:#57606a;--grid:#e6e9ed;--panel:#f6f8fa;--border:#d0d7de;--c0:#1f6feb;--c1:#cf222e;--c2:#1a7f37;--c3:#8250df;--c4:#bc4c00;--c5:#0a7f8a;--c6:#bf3989;--c7:#6e7781;--stage:#8250df;--ckpt:#57606a;--resume:#9a6700;--stop:#cf222e}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#8d96a0;--grid:#21262d;--panel:#161b22;--border:#30363d;--c0:#58a6ff;--c1:#ff7b72;--c2:#3fb950;--c3:#d2a8ff;--c4:#ffa657;--c5:#39c5cf;--c6:#f778ba;--c7:#a5aeb8;--stage:#d2a8ff;--ckpt:#8d96a0;--resume:#e3b341;--stop:#ff7b72}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1200px;padding:12px;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--fg)}
h1{font-size:1.4em;margin:.2em 0;overflow-wrap:anywhere}
h2{font-size:1.15em;margin:1.4em 0 .5em;padding-bottom:.2em;border-bottom:1px solid var(--border)}
h3{font-size:1em;margin:.6em 0 .3em;overflow-wrap:anywhere}
.sub,.hint,.key{color:var(--muted);font-size:.9em;margin:.3em 0}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,430px),1fr));gap:12px}
figure{margin:0;padding:8px;background:var(--panel);border:1px solid var(--border);border-radius:6px;min-width:0}
figcaption{font-weight:600;overflow-wrap:anywhere}
svg.chart{display:block;width:100%;height:auto}
svg text{fill:var(--muted);font-size:11px;font-family:inherit}
@media (max-width:560px){svg text{font-size:15px}}
.gridline{stroke:var(--grid)}
.axisline{stroke:var(--border)}
.line{fill:none;stroke-width:1.8;stroke-linejoin:round;stroke-linecap:round}
.dashed{stroke-dasharray:6 3}
.mark{fill:none;stroke-width:1.3}
.m-stage{stroke:var(--stage);stroke-dasharray:4 3}
.m-resume{stroke:var(--resume);stroke-width:2}
.m-stop,.m-error{stroke:var(--stop);stroke-dasharray:2 2}
.m-checkpoint{fill:var(--ckpt);stroke:none}
.k-stage{color:var(--stage)}.k-resume{color:var(--resume)}.k-stop{color:var(--stop)}.k-checkpoint{color:var(--ckpt)}
.scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:.9em;font-variant-numeric:tabular-nums}
th,td{padding:4px 8px;border-bottom:1px solid var(--border);text-align:left;white-space:nowrap}
td.num{text-align:right}
table.sortable th{cursor:pointer;user-select:none}
th[aria-sort=ascending]::after{content:" \25B2"}
th[aria-sort=descending]::after{content:" \25BC"}
.src{color:var(--muted);font-size:.85em;margin-left:.4em}
tr.differs td:first-child{font-weight:600}
.legend{list-style:none;margin:0 0 8px;padding:6px 0;display:flex;flex-wrap:wrap;gap:4px 16px;position:sticky;top:0;background:var(--bg);z-index:1}
.sw{font-weight:700;margin-right:6px}
.state-failed{color:var(--stop)}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:.3em 0}
dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere}
details{margin:.4em 0}summary{cursor:pointer;font-weight:600}
)";

// Sorts a table by the header clicked (again: the other way), by each cell's data-v.
constexpr const char* kScript = R"((function () {
  function key(row, i) { return row.cells[i].getAttribute('data-v') || ''; }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, i) {
      th.tabIndex = 0;
      function sort() {
        var asc = th.getAttribute('aria-sort') !== 'ascending';
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
        var numeric = th.getAttribute('data-type') === 'number', body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a, i), y = key(b, i);
          if (x === '' || y === '') return (x === '') - (y === '');
          var d = numeric ? parseFloat(x) - parseFloat(y) : (x < y ? -1 : x > y ? 1 : 0);
          return asc ? d : -d;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      }
      th.addEventListener('click', sort);
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(); }
      });
    });
  });
  document.documentElement.setAttribute('data-ready', '1');
})();
)";

std::string colour_styles() {
  std::string out;
  for (size_t k = 0; k < kColours; ++k)
    out += fmt::format(
        ".r{0}{{stroke:var(--c{0})}}.dot.r{0}{{fill:var(--c{0});stroke:none}}.sw.r{0}{{color:var(--c{0})}}\n", k);
  return out;
}

std::string legend(const Report& r) {
  std::string out = "<ul class=\"legend\">";
  for (size_t k = 0; k < r.runs.size(); ++k)
    out +=
        fmt::format(R"(<li><span class="sw r{}">&#9473;&#9473;</span>{}</li>)", k % kColours, escape(r.runs[k].label));
  return out + "</ul>\n";
}

std::string figure(const Chart& c, const std::vector<Mark>& marks, const std::vector<std::string>& labels,
                   size_t index) {
  return fmt::format("<figure id=\"chart-{}\" data-metric=\"{}\"><figcaption>{}</figcaption>\n{}\n</figure>\n", index,
                     escape(c.name), escape(c.name), chart_svg(c, marks, labels));
}

std::string mark_key(const std::vector<Mark>& marks) {
  std::map<Mark::Kind, size_t> count;
  for (const auto& m : marks) ++count[m.kind];
  if (count.empty()) return "";
  static const std::map<Mark::Kind, std::pair<const char*, const char*>> names = {
      {Mark::stage, {"k-stage", "dashed line: a stage change"}},
      {Mark::checkpoint, {"k-checkpoint", "triangle on the axis: a checkpoint"}},
      {Mark::resume, {"k-resume", "solid line: a resume (from that step's checkpoint)"}},
      {Mark::stop, {"k-stop", "dotted line: stopped by a signal"}},
      {Mark::error, {"k-stop", "dotted line: failed"}}};
  std::vector<std::string> parts;
  for (const auto& [kind, n] : count)
    parts.push_back(fmt::format(R"(<span class="{}">{}</span> ({}))", names.at(kind).first, names.at(kind).second, n));
  return fmt::format("<p class=\"key\">On the step axis: {}. Hover a mark for what it was.</p>\n",
                     fmt::join(parts, "; "));
}

}  // namespace

std::string html_page(const Report& r) {
  std::vector<Chart> all = charts(r);
  std::vector<Mark> ms = marks(r);
  std::vector<std::string> labels;
  for (const auto& run : r.runs) labels.push_back(run.label);
  int64_t steps = 0;
  for (const auto& run : r.runs) steps = std::max(steps, last_step(run));

  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<meta name=\"generator\" content=\"sexpgpu {}\">\n", SEXPGPU_VERSION);
  out += fmt::format("<title>{} - sexpgpu report</title>\n<style>\n{}{}</style>\n</head>\n<body>\n", escape(r.title),
                     kStyle, colour_styles());
  out += fmt::format(
      "<header>\n<h1>{}</h1>\n<p class=\"sub\">{} {}, up to step {}{}. Made by sexpgpu report "
      "{}.</p>\n</header>\n<main>\n",
      escape(r.title), r.runs.size(), r.runs.size() == 1 ? "run" : "runs", steps,
      r.sweep_file.empty() ? "" : ", a sweep of " + escape(r.sweep_file), SEXPGPU_VERSION);
  out += "<section id=\"final\">\n<h2>Final metrics</h2>\n" + finals_table(r);
  if (r.runs.size() > 1) out += "<p class=\"hint\">Click a column's header to sort the runs by it.</p>\n";
  out += "</section>\n<section id=\"curves\">\n<h2>Curves</h2>\n";
  if (r.runs.size() > 1) out += legend(r);
  out += mark_key(ms) + "<div class=\"grid\">\n";
  size_t index = 0;
  for (const auto& c : all)
    if (c.group.empty()) out += figure(c, ms, labels, index++);
  out += "</div>\n</section>\n";
  std::map<std::string, std::vector<const Chart*>> groups;
  for (const auto& c : all)
    if (!c.group.empty()) groups[c.group].push_back(&c);
  if (!groups.empty()) {
    out += "<section id=\"diagnostics\">\n<h2>Diagnostics</h2>\n";
    for (const auto& [group, list] : groups) {
      out +=
          fmt::format("<details><summary>{} ({} series)</summary>\n<div class=\"grid\">\n", escape(group), list.size());
      for (const Chart* c : list) out += figure(*c, ms, labels, index++);
      out += "</div>\n</details>\n";
    }
    out += "</section>\n";
  }
  out += runs_section(r);
  out += "<section id=\"knobs\">\n<h2>Knobs</h2>\n" + knobs_table(r) + "</section>\n";
  out += fmt::format("</main>\n<script>\n{}</script>\n</body>\n</html>\n", kScript);
  return out;
}

}  // namespace sx::report
