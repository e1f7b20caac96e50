#include <gtest/gtest.h>

#include <algorithm>

#include "cli/report_html.h"
#include "cli/report_svg.h"

namespace sx::report {
namespace {

// Two segments: the second resumed from step 2's checkpoint and re-ran step 3.
const char* kResumed =
    R"({"kind":"meta","slug":"r","knobs":[{"name":"lr","value":0.01,"source":"default"}],"started_at":"a","resumed_from":null})"
    "\n"
    R"({"kind":"eval","pass":"eval","step":0,"eval/loss":3.5,"records":0,"elapsed_s":0.1})"
    "\n"
    R"({"kind":"step","step":1,"train/loss":3.0,"lr":0.01,"tokens":10,"step_s":0.5,"grad/norm/a.w":1.5,"grad/norm/b.w":2.5})"
    "\n"
    R"({"kind":"step","step":2,"train/loss":2.0,"lr":0.01,"tokens":20,"step_s":0.5,"grad/norm/a.w":1.25,"grad/norm/b.w":2.25})"
    "\n"
    R"({"kind":"event","event":"checkpoint","step":2,"path":"ck/r/step-2"})"
    "\n"
    R"({"kind":"step","step":3,"train/loss":9.0,"lr":0.01,"tokens":30,"step_s":0.5,"elapsed_s":1.5})"
    "\n"
    R"({"kind":"meta","slug":"r","knobs":[{"name":"lr","value":0.01,"source":"default"}],"started_at":"b","resumed_from":{"step":2,"path":"ck/r/step-2"}})"
    "\n"
    R"({"kind":"event","event":"resume","step":2,"from":"ck/r/step-2","differences":[{"class":"safe","knob":"steps","from":"3","to":"4"}]})"
    "\n"
    R"({"kind":"step","step":3,"train/loss":1.5,"lr":0.01,"tokens":30,"step_s":0.25,"elapsed_s":0.25})"
    "\n"
    R"({"kind":"eval","pass":"probe","step":3,"eval/loss":1.25,"records":30})"
    "\n"
    R"({"kind":"event","event":"stage","step":3,"from":0,"to":1,"name":"b","condition":"eval/loss 1.25 < 2"})"
    "\n"
    R"({"kind":"summary","steps":3})"
    "\n";

const Chart& chart(const std::vector<Chart>& all, const std::string& name) {
  for (const auto& c : all)
    if (c.name == name) return c;
  ADD_FAILURE() << "no chart " << name;
  static Chart none;
  return none;
}

TEST(Report, LatestSegmentReplacesRerunSteps) {
  Report r = report_of("t", {{"r", kResumed}});
  std::vector<Chart> all = charts(r);
  const Chart& loss = chart(all, "train/loss");
  ASSERT_EQ(loss.series.size(), 1u);
  ASSERT_EQ(loss.series[0].points.size(), 3u);
  EXPECT_EQ(loss.series[0].points[2].value, 1.5);  // the second segment's step 3
  EXPECT_EQ(chart(all, "eval/loss").series[0].points.size(), 1u);
  EXPECT_EQ(chart(all, "probe:eval/loss").series[0].points.size(), 1u);
  // Step 3's latest record has no diagnostics: the curve stops at step 2.
  const Chart& grad = chart(all, "grad/norm/a.w");
  EXPECT_EQ(grad.group, "grad/norm");
  EXPECT_EQ(grad.series[0].points.size(), 2u);
  // Tokens a second: 10 tokens in 0.5 s, then step 3 of the resumed segment, 10 in 0.25 s.
  const Chart& tps = chart(all, "tokens/s");
  ASSERT_EQ(tps.series[0].points.size(), 3u);
  EXPECT_EQ(tps.series[0].points[2].value, 40);
  EXPECT_EQ(r.runs[0].state, "done");
  EXPECT_DOUBLE_EQ(time_s(r.runs[0]), 1.75);
}

TEST(Report, MarksOnTheStepAxis) {
  Report r = report_of("t", {{"r", kResumed}});
  std::vector<Mark> ms = marks(r);
  ASSERT_EQ(ms.size(), 3u);
  EXPECT_EQ(ms[0].kind, Mark::resume);
  EXPECT_EQ(ms[0].step, 2);
  EXPECT_EQ(ms[1].kind, Mark::checkpoint);
  EXPECT_EQ(ms[2].kind, Mark::stage);
  EXPECT_EQ(ms[2].label, "stage 1 b at step 3 (eval/loss 1.25 < 2)");
}

TEST(Report, FinalMetrics) {
  Report r = report_of("t", {{"r", kResumed}, {"s", "{\"kind\":\"step\",\"step\":1,\"train/loss\":4.0}\n"}});
  Final f = finals(r);
  ASSERT_EQ(f.metrics, (std::vector<std::string>{"train/loss", "eval/loss", "probe:eval/loss"}));
  EXPECT_EQ(*f.values[0][0], 1.5);
  EXPECT_EQ(*f.values[0][2], 1.25);
  EXPECT_EQ(*f.values[1][0], 4.0);
  EXPECT_FALSE(f.values[1][1].has_value());
  EXPECT_EQ(r.runs[1].state, "unfinished");
}

TEST(Report, Escape) {
  EXPECT_EQ(escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
  EXPECT_EQ(escape("a\x1b[2Jb"), "a\\x1b[2Jb");
}

TEST(Report, Ticks) {
  Ticks t = nice_ticks(2.13, 3.48, 5);
  EXPECT_DOUBLE_EQ(t.step, 0.2);
  EXPECT_DOUBLE_EQ(t.lo, 2.0);
  EXPECT_DOUBLE_EQ(t.hi, 3.6);
  EXPECT_EQ(tick_label(2.4000000000000004, 0.2), "2.4");
  EXPECT_EQ(tick_label(-1e-17, 0.2), "0.0");
  EXPECT_EQ(tick_label(1500, 500), "1500");
  EXPECT_EQ(tick_label(2e-12, 1e-12), "2.0e-12");
  EXPECT_EQ(tick_label(1.05e-3, 5e-5), "0.00105");
  EXPECT_EQ(tick_label(1.05e-9, 5e-11), "1.05e-09");
  EXPECT_EQ(tick_label(2e7, 5e6), "2.0e+07");
  Ticks flat = nice_ticks(3, 3, 5);  // one value: a band around it
  EXPECT_LT(flat.lo, 3);
  EXPECT_GT(flat.hi, 3);
  Ticks narrow = nice_ticks(1e6, 1e6 + 1e-10, 5);  // closer than doubles can step: as one value
  EXPECT_GT(narrow.step, 1);
}

TEST(Report, ExtremeValuesStillDraw) {
  for (auto [lo, hi] : {std::pair{1e6, 1e6 + 1e-10}, std::pair{-1e308, 1e308}, std::pair{0.0, 5e-324}}) {
    Chart c{"train/loss", "", true, {{0, {{1, lo}, {2, hi}}}}};
    std::string svg = chart_svg(c, {}, {"a"});
    EXPECT_NE(svg.find("data-points=\"2\""), std::string::npos) << lo << " " << hi;
    EXPECT_LT(svg.size(), 20000u);
    for (const char* bad : {"nan\"", "nan ", "nanL", "inf\"", "inf "})
      EXPECT_EQ(svg.find(bad), std::string::npos) << svg;
  }
}

TEST(Report, PageIsDeterministicAndEscaped) {
  std::string evil = "<script>alert(1)</script>";
  std::string jsonl =
      "{\"kind\":\"meta\",\"slug\":\"" + evil + "\",\"knobs\":[{\"name\":\"" + evil + "\",\"value\":\"" + evil +
      "\",\"source\":\"override\"}]}\n"
      "{\"kind\":\"step\",\"step\":1,\"train/loss\":2.0}\n{\"kind\":\"step\",\"step\":2,\"train/loss\":1.0}\n";
  Report r = report_of(evil, {{evil, jsonl}, {"b", kResumed}});
  std::string page = html_page(r);
  EXPECT_EQ(page, html_page(r));
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  size_t scripts = 0;
  for (size_t at = page.find("<script"); at != std::string::npos; at = page.find("<script", at + 1)) ++scripts;
  EXPECT_EQ(scripts, 1u);
  EXPECT_NE(page.find("data-points=\"2\""), std::string::npos);
  EXPECT_NE(page.find("data-points=\"3\""), std::string::npos);
}

TEST(Report, SvgOnePathPerSeries) {
  Report r = report_of("t", {{"a", kResumed}, {"b", kResumed}});
  std::vector<Chart> all = charts(r);
  std::string svg = chart_svg(chart(all, "train/loss"), marks(r), {"a", "b"});
  size_t paths = 0;
  for (size_t at = svg.find("<path class=\"line"); at != std::string::npos; at = svg.find("<path class=\"line", at + 1))
    ++paths;
  EXPECT_EQ(paths, 2u);
  EXPECT_NE(svg.find("class=\"line r1\""), std::string::npos);
  EXPECT_NE(svg.find("<title>a: resumed from step 2</title>"), std::string::npos);
}

TEST(Report, LongSeriesDrawnByItsEnvelope) {
  Chart c{"train/loss", "", true, {{0, {}}}};
  for (int64_t step = 1; step <= 100000; ++step)
    c.series[0].points.push_back({step, step == 77777 ? 9.0 : 1.0 + step % 7});
  c.series[0].points[31].value = -5;  // one low outlier and one high: both must be drawn
  std::string svg = chart_svg(c, {}, {"a"});
  EXPECT_NE(svg.find("data-points=\"100000\""), std::string::npos);
  auto at = svg.find("data-drawn=\"");
  ASSERT_NE(at, std::string::npos);
  int drawn = std::stoi(svg.substr(at + 12));
  EXPECT_LE(drawn, 4 * 2 * 490);
  std::string d = svg.substr(svg.find(" d=\"M") + 4);
  d = d.substr(0, d.find('"'));
  EXPECT_EQ(std::count(d.begin(), d.end(), 'L') + 1, drawn);
  // The y axis spans -6..10 (kTop 12 .. kBottom 216): the other values (1..7) lie between 50 and 127,
  // the high outlier (9) at 24.75, the low (-5) at 203.25.
  double top = 1e9, bottom = -1e9;
  for (size_t at = 0; (at = d.find(' ', at)) != std::string::npos; ++at) {
    double y = std::stod(d.substr(at + 1));
    top = std::min(top, y), bottom = std::max(bottom, y);
  }
  EXPECT_NEAR(top, 24.75, 0.06);
  EXPECT_NEAR(bottom, 203.25, 0.06);
}

}  // namespace
}  // namespace sx::report
