// The report's tables: the final metrics (sortable), each run's segments and
// facts, the knobs with their sources.
#include <fmt/format.h>

#include <set>

#include "cli/report_html.h"
#include "cli/report_svg.h"

namespace sx::report {

namespace {

using records::Json;
using records::number;
using records::text;

std::string value_text(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "-";
  return v.dump();
}

std::string number_cell(const std::optional<double>& v, const char* format = "{:.4f}") {
  if (!v) return "<td class=\"num\" data-v=\"\">-</td>";
  return fmt::format("<td class=\"num\" data-v=\"{}\">{}</td>", *v, fmt::format(fmt::runtime(format), *v));
}

const Json* last_meta(const Run& run) {
  return run.history.segments.empty() ? nullptr : &run.history.segments.back().meta;
}

std::string state_text(const Run& run) { return run.error.empty() ? run.state : run.state + " " + run.error; }

std::string segments_table(const Run& run) {
  const records::History& h = run.history;
  std::string out =
      "<div class=\"scroll\"><table class=\"segments\"><thead><tr><th>segment</th><th>started</th><th>from</th>"
      "<th>steps</th><th>elapsed</th><th>changed on resume</th></tr></thead><tbody>\n";
  for (size_t k = 0; k < h.segments.size(); ++k) {
    const records::Segment& s = h.segments[k];
    std::string from = "the beginning", changes;
    if (s.resumed_from) {
      from = fmt::format("step {}", *s.resumed_from);
      auto e = h.events.find({"resume", *s.resumed_from});
      if (e != h.events.end() && e->second.contains("differences") && e->second["differences"].is_array())
        for (const auto& d : e->second["differences"])
          changes += fmt::format("{}{} {} {} &#8594; {}", changes.empty() ? "" : "; ", escape(text(d, "class")),
                                 escape(text(d, "knob")), escape(text(d, "from")), escape(text(d, "to")));
    }
    std::string steps = s.last_step ? fmt::format("{}..{}", s.first_step, s.last_step) : "-";
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{:.1f}s</td><td>{}</td></tr>\n", k + 1,
        escape(text(s.meta, "started_at")), escape(from), steps, s.elapsed_s, changes.empty() ? "-" : changes);
  }
  return out + "</tbody></table></div>\n";
}

}  // namespace

std::string finals_table(const Report& r) {
  Final f = finals(r);
  std::string out =
      "<div class=\"scroll\"><table class=\"sortable\" id=\"finals\"><thead><tr>"
      "<th scope=\"col\">run</th><th scope=\"col\">state</th><th scope=\"col\" data-type=\"number\">steps</th>";
  for (const auto& m : f.metrics) out += fmt::format("<th scope=\"col\" data-type=\"number\">{}</th>", escape(m));
  out += "<th scope=\"col\" data-type=\"number\">time</th></tr></thead><tbody>\n";
  for (size_t k = 0; k < r.runs.size(); ++k) {
    const Run& run = r.runs[k];
    std::string label = escape(run.label), state = escape(state_text(run));
    out += fmt::format(
        "<tr data-run=\"{0}\"><td data-v=\"{0}\"><span class=\"sw r{1}\">&#9473;&#9473;</span>{0}</td>"
        "<td data-v=\"{2}\" class=\"state-{3}\">{2}</td><td class=\"num\" data-v=\"{4}\">{4}</td>",
        label, k % kColours, state, escape(run.state), last_step(run));
    for (const auto& v : f.values[k]) out += number_cell(v);
    out += number_cell(time_s(run), "{:.1f}s") + "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

std::string runs_section(const Report& r) {
  std::string out = "<section id=\"runs\">\n<h2>Runs</h2>\n";
  for (const auto& run : r.runs) {
    out += fmt::format("<details class=\"run\"{}><summary>{} ({})</summary>\n", r.runs.size() == 1 ? " open" : "",
                       escape(run.label), escape(state_text(run)));
    const Json* meta = last_meta(run);
    out += "<dl>";
    out += fmt::format("<dt>metrics</dt><dd>{}</dd>", escape(run.source));
    if (meta) {
      for (const char* key : {"file", "run", "device", "precision", "version", "graph"})
        if (meta->contains(key)) out += fmt::format("<dt>{}</dt><dd>{}</dd>", key, escape(value_text((*meta)[key])));
      if (auto params = number(*meta, "params")) out += fmt::format("<dt>parameters</dt><dd>{:.0f}</dd>", *params);
    }
    out += "</dl>\n";
    if (!run.history.segments.empty()) out += segments_table(run);
    out += "</details>\n";
  }
  return out + "</section>\n";
}

std::string knobs_table(const Report& r) {
  // Knobs in the order the first run that has them lists them: the settings first, then the defknobs.
  std::vector<std::string> names;
  std::set<std::string> seen;
  std::vector<std::map<std::string, std::pair<std::string, std::string>>> by_run(r.runs.size());
  for (size_t k = 0; k < r.runs.size(); ++k) {
    const Json* meta = last_meta(r.runs[k]);
    if (!meta || !meta->contains("knobs") || !(*meta)["knobs"].is_array()) continue;
    for (const auto& knob : (*meta)["knobs"]) {
      std::string name = text(knob, "name");
      if (name.empty()) continue;
      if (seen.insert(name).second) names.push_back(name);
      by_run[k][name] = {knob.contains("value") ? value_text(knob["value"]) : "-", text(knob, "source")};
    }
  }
  if (names.empty()) return "<p class=\"hint\">No run recorded its knobs (no meta record).</p>\n";
  std::string out = "<div class=\"scroll\"><table class=\"knobs\"><thead><tr><th scope=\"col\">knob</th>";
  for (const auto& run : r.runs) out += fmt::format("<th scope=\"col\">{}</th>", escape(run.label));
  out += "</tr></thead><tbody>\n";
  for (const auto& name : names) {
    std::set<std::string> values;
    std::string cells;
    for (size_t k = 0; k < r.runs.size(); ++k) {
      auto it = by_run[k].find(name);
      if (it == by_run[k].end()) {
        cells += "<td>-</td>";
        values.insert("");
        continue;
      }
      values.insert(it->second.first);
      cells +=
          fmt::format("<td>{}<span class=\"src\">{}</span></td>", escape(it->second.first), escape(it->second.second));
    }
    out +=
        fmt::format("<tr{}><td>{}</td>{}</tr>\n", values.size() > 1 ? " class=\"differs\"" : "", escape(name), cells);
  }
  out += "</tbody></table></div>\n";
  if (r.runs.size() > 1) out += "<p class=\"hint\">Knobs in bold differ between the runs.</p>\n";
  return out;
}

}  // namespace sx::report
