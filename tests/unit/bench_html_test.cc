// HTML bench report and its SVG charts: nice ticks on hand-computed ranges, XML escaping of
// every user-controlled string, one <svg> per expected chart, every runtime and failure shown.
// Well-formedness as XML is checked in tests/cli/bench_cli_test.sh (python3 xml.etree).
#include <gtest/gtest.h>

#include <regex>

#include "bench/report_html.h"
#include "bench/report_markdown.h"
#include "bench/svg.h"

namespace edgemm::bench {
namespace bench_html_test {  // named for the file: unity batches merge anonymous namespaces

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

/// True when every '<' opens a tag, comment or doctype and every '&' starts an entity.
bool markup_is_escaped(const std::string& html) {
  static const std::regex bare_lt("<[^a-zA-Z/!]");
  static const std::regex bare_amp("&(?!(amp|lt|gt|quot|#[0-9]+);)");
  return !std::regex_search(html, bare_lt) && !std::regex_search(html, bare_amp);
}

RuntimeResult ok_runtime(const std::string& name, std::vector<double> times, int64_t peak_mib) {
  RuntimeResult rt;
  rt.name = name;
  rt.version = "1.0";
  rt.settings = {{"threads", 1}};
  rt.times_ms = std::move(times);
  rt.memory.rss_before_load = 100 << 20;
  rt.memory.peak_rss = (100 + peak_mib) << 20;
  return rt;
}

RuntimeResult failed_runtime() {
  RuntimeResult rt;
  rt.name = "opencv";
  rt.version = "4.6.0";
  rt.error = "cannot load: Shape<0> & \"friends\"";
  rt.failed_stage = "load";
  return rt;
}

BenchPoint point(int threads, const std::string& sweep_key, int64_t sweep_value, bool with_peers) {
  BenchPoint p;
  p.threads = threads;
  p.sweep_key = sweep_key;
  p.sweep_value = sweep_value;
  p.inputs = "x=[1,3,48,192] float32";
  const double scale = sweep_value > 0 ? static_cast<double>(sweep_value) / 100 : 1.0 / threads;
  p.runtimes.push_back(ok_runtime("edgemm", {10 * scale, 11 * scale, 9 * scale}, 40));
  if (with_peers) {
    p.runtimes.push_back(ok_runtime("onnxruntime", {20 * scale, 21 * scale, 19 * scale}, 30));
    p.runtimes.push_back(failed_runtime());
  }
  finish_point(p);
  return p;
}

BenchReport report(std::vector<BenchPoint> points) {
  BenchReport r;
  r.edgemm_version = "0.1.0";
  r.created = "2026-11-29T00:00:00Z";
  r.kind = "model";
  r.subject = "models/a<b&c.onnx";
  r.command = "edgemm bench models/a<b&c.onnx --compare ort,opencv";
  r.machine.cpu = "Test CPU <fast>";
  r.settings.iters = 3;
  r.energy_note = "energy: not measured (no counter)";
  r.points = std::move(points);
  return r;
}

TEST(BenchSvg, NiceTicksOnHandComputedRanges) {
  const svg::Ticks a = svg::nice_ticks(0, 97, 5);  // raw step 19.4 → 20
  EXPECT_DOUBLE_EQ(a.step, 20);
  EXPECT_DOUBLE_EQ(a.lo, 0);
  EXPECT_DOUBLE_EQ(a.hi, 100);
  EXPECT_EQ(a.values.size(), 6u);
  const svg::Ticks b = svg::nice_ticks(9.1, 21.3, 6);  // raw 2.03 → 5, rounded out to 5..25
  EXPECT_DOUBLE_EQ(b.step, 5);
  EXPECT_DOUBLE_EQ(b.lo, 5);
  EXPECT_DOUBLE_EQ(b.hi, 25);
  EXPECT_EQ(b.values, (std::vector<double>{5, 10, 15, 20, 25}));
  const svg::Ticks c = svg::nice_ticks(0.013, 0.048, 5);  // raw 0.007 → 0.01
  EXPECT_DOUBLE_EQ(c.step, 0.01);
  EXPECT_NEAR(c.lo, 0.01, 1e-12);
  EXPECT_NEAR(c.hi, 0.05, 1e-12);
  EXPECT_EQ(c.values.size(), 5u);
  const svg::Ticks d = svg::nice_ticks(2, 4, 2);  // exactly 1 per interval
  EXPECT_EQ(d.values, (std::vector<double>{2, 3, 4}));
  const svg::Ticks flat = svg::nice_ticks(10, 10, 5);  // widened to 9..11: raw 0.4 → 0.5
  EXPECT_DOUBLE_EQ(flat.step, 0.5);
  EXPECT_DOUBLE_EQ(flat.lo, 9);
  EXPECT_DOUBLE_EQ(flat.hi, 11);
}

TEST(BenchSvg, TickLabelsAndEscaping) {
  EXPECT_EQ(svg::tick_label(20, 20), "20");
  EXPECT_EQ(svg::tick_label(2.5, 0.5), "2.5");
  EXPECT_EQ(svg::tick_label(0.05, 0.01), "0.05");
  EXPECT_EQ(svg::tick_label(-1e-17, 0.1), "0.0");
  EXPECT_EQ(svg::xml_escape("a<b&c\"d'e>"), "a&lt;b&amp;c&quot;d&#39;e&gt;");
  EXPECT_NE(svg::runtime_colour("edgemm"), svg::runtime_colour("onnxruntime"));
  EXPECT_NE(svg::runtime_colour("onnxruntime"), svg::runtime_colour("opencv"));
  EXPECT_EQ(svg::runtime_colour("tvm"), svg::runtime_colour("tflite"));
}

TEST(BenchSvg, LongLabelsAreCutWithATooltip) {
  const std::string label(200, 'x');
  svg::BarChart chart;
  chart.title = "t";
  chart.bars.push_back({label + "<", 3, "#000000", 0.25});
  const std::string out = svg::bar_chart(chart);
  EXPECT_NE(out.find("<title>" + label + "&lt;</title>"), std::string::npos);
  EXPECT_NE(out.find("…</text>"), std::string::npos);
  EXPECT_NE(out.find("3.00 (25.0 %)"), std::string::npos);
  EXPECT_TRUE(markup_is_escaped(out));
}

TEST(BenchSvg, ChartsDrawEverySampleAndSeries) {
  svg::BoxPlot box{
      "latency", "latency (ms)", "ms", {{"edgemm", "#0072B2", {1, 2, 3, 4}, ""}, {"opencv", "#009E73", {}, "failed"}}};
  const std::string b = svg::box_strip_plot(box);
  EXPECT_EQ(count(b, "<circle"), 4u);
  EXPECT_NE(b.find("median 2.50 ms"), std::string::npos);
  EXPECT_NE(b.find(">failed</text>"), std::string::npos);
  svg::LineChart lines{"scaling",
                       "threads",
                       "median (ms)",
                       {{"edgemm", "#0072B2", false, {{1, 10}, {2, 6}}}, {"ort", "#E69F00", true, {{1, 12}}}}};
  const std::string l = svg::line_chart(lines);
  EXPECT_EQ(count(l, "<polyline"), 2u);
  EXPECT_EQ(count(l, "<circle"), 3u + 2u);  // markers plus one per legend entry
  EXPECT_NE(l.find(">median (ms)</text>"), std::string::npos);
}

TEST(BenchHtml, CompareReportHasEveryChartRuntimeAndFailure) {
  const BenchReport r = report({point(1, "", 0, true), point(2, "", 0, true)});
  const std::string html = to_html(r);
  // A box plot per point, the ratio bars, and latency and memory lines over the threads.
  EXPECT_EQ(count(html, "<svg "), 5u);
  for (const char* name : {"edgemm", "onnxruntime", "opencv"}) EXPECT_NE(html.find(name), std::string::npos) << name;
  EXPECT_NE(html.find("cannot load: Shape&lt;0&gt; &amp; &quot;friends&quot;"), std::string::npos);
  EXPECT_NE(html.find("models/a&lt;b&amp;c.onnx"), std::string::npos);
  EXPECT_EQ(html.find("a<b"), std::string::npos);
  EXPECT_EQ(html.find("Shape<0>"), std::string::npos);
  EXPECT_TRUE(markup_is_escaped(html));
  EXPECT_NE(html.find("<li>energy: not measured (no counter)</li>"), std::string::npos);
  for (const auto& column : results_header(false)) {
    EXPECT_NE(html.find(">" + svg::xml_escape(column) + "</th>"), std::string::npos) << column;
  }
  EXPECT_NE(html.find("Median latency vs intra-op threads"), std::string::npos);
  EXPECT_NE(html.find("Peak RSS added vs intra-op threads"), std::string::npos);
}

TEST(BenchHtml, ChartsFollowTheReportsShape) {
  EXPECT_EQ(count(to_html(report({point(1, "", 0, false)})), "<svg "), 1u);  // edgemm alone: no ratio, no lines
  EXPECT_EQ(count(to_html(report({point(1, "", 0, true)})), "<svg "), 2u);
  const std::string sweep =
      to_html(report({point(1, "width", 96, true), point(1, "width", 192, true), point(1, "width", 384, true)}));
  EXPECT_EQ(count(sweep, "<svg "), 3u + 1u + 2u);
  EXPECT_NE(sweep.find("Median latency vs input width"), std::string::npos);
  EXPECT_NE(sweep.find("onnxruntime · width 192"), std::string::npos);

  BenchReport pipeline = report({point(1, "", 0, false)});
  pipeline.kind = "pipeline";
  pipeline.points[0].runtimes[0].stage_median_ms = {{"det", 3}, {"rec", 1}};
  const std::string stages = to_html(pipeline);
  EXPECT_EQ(count(stages, "<svg "), 2u);  // the box plot and the stage bars
  EXPECT_NE(stages.find("3.00 ms (75.0 %)"), std::string::npos);
}

}  // namespace bench_html_test
}  // namespace edgemm::bench
