#include "bench/report_html.h"

#include <algorithm>
#include <set>

#include "bench/report_markdown.h"
#include "bench/svg.h"

namespace edgemm::bench {

namespace {

using svg::xml_escape;

constexpr const char* kStyle = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #222;
       background: #fff; max-width: 940px; margin: 24px auto; padding: 0 16px; line-height: 1.45; font-size: 14px; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 18px; border-bottom: 1px solid #ddd; padding-bottom: 3px; margin-top: 28px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.muted { color: #666; }
ul { padding-left: 20px; }
pre, code { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
pre { background: #f5f5f5; border: 1px solid #e3e3e3; padding: 6px 8px; white-space: pre-wrap;
      overflow-wrap: anywhere; margin: 4px 0; }
code { overflow-wrap: anywhere; }
.error { color: #b00020; }
.wide { overflow-x: auto; }
table { border-collapse: collapse; font-size: 11px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d0d0; padding: 2px 4px; text-align: right; }
th { background: #f0f0f0; vertical-align: bottom; }
td.name, th.name { text-align: left; }
td.name, tr.failed td { white-space: nowrap; }
tr.failed td { color: #b00020; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: baseline; }
figure { margin: 12px 0 20px; break-inside: avoid; page-break-inside: avoid; }
svg.chart { max-width: 100%; height: auto; display: block; }
@media print {
  body { max-width: none; margin: 0; font-size: 11px; }
  .wide { overflow: visible; }
  h2, h3 { break-after: avoid; page-break-after: avoid; }
}
)";

std::string element(const std::string& tag, const std::string& text, const std::string& attrs = "") {
  return "<" + tag + (attrs.empty() ? "" : " " + attrs) + ">" + text + "</" + tag + ">";
}

/// "threads 2" or "threads 2, width 192".
std::string point_title(const BenchPoint& p) {
  std::string title = "threads " + std::to_string(p.threads);
  if (!p.sweep_key.empty()) title += ", " + p.sweep_key + " " + std::to_string(p.sweep_value);
  return title;
}

size_t distinct_threads(const BenchReport& r) {
  std::set<int> threads;
  for (const auto& p : r.points) threads.insert(p.threads);
  return threads.size();
}

/// What tells `p` apart from the report's other points: "width 96", "2 threads" or
/// "2 threads, width 96".
std::string point_label(const BenchReport& r, const BenchPoint& p) {
  const std::string threads = std::to_string(p.threads) + (p.threads == 1 ? " thread" : " threads");
  if (p.sweep_key.empty()) return threads;
  const std::string sweep = p.sweep_key + " " + std::to_string(p.sweep_value);
  return distinct_threads(r) > 1 ? threads + ", " + sweep : sweep;
}

std::string swatch(const std::string& runtime) {
  return "<span class=\"swatch\" style=\"background:" + svg::runtime_colour(runtime) + "\"></span>";
}

std::string summary_section(const BenchReport& r) {
  std::string out = element("p",
                            "Created " + xml_escape(r.created) + " by edgemm " + xml_escape(r.edgemm_version) + " (" +
                                xml_escape(r.kind) + " benchmark)",
                            "class=\"muted\"");
  out += "<ul>\n";
  out += element("li", "<b>Machine:</b> " + xml_escape(machine_summary(r))) + "\n";
  out += element("li", "<b>Inputs:</b> " + xml_escape(inputs_summary(r))) + "\n";
  out += element("li", "<b>Runs:</b> " + xml_escape(runs_summary(r.settings))) + "\n";
  out += element("li", xml_escape(r.energy_note)) + "\n";
  out += "</ul>\n";
  return out + element("h2", "Command") + "\n" + element("pre", xml_escape(r.command)) + "\n";
}

/// One line per distinct runtime, version and settings.
std::string runtimes_section(const BenchReport& r) {
  std::string items;
  std::set<std::string> seen;
  for (const auto& p : r.points) {
    for (const auto& rt : p.runtimes) {
      const std::string item =
          element("li", swatch(rt.name) + "<b>" + xml_escape(rt.name) + "</b> " + xml_escape(rt.version) + ": " +
                            element("code", xml_escape(rt.settings.dump())));
      if (seen.insert(item).second) items += item + "\n";
    }
  }
  return element("h2", "Runtimes") + "\n<ul>\n" + items + "</ul>\n";
}

/// Runtimes that could not start, load or run, and energy meters that failed; "" when none.
std::string failures_section(const BenchReport& r) {
  std::string items;
  for (const auto& p : r.points) {
    for (const auto& rt : p.runtimes) {
      const std::string who = "<b>" + xml_escape(rt.name) + "</b> at " + xml_escape(point_title(p));
      if (!rt.ok()) {
        items += element("li", who + " could not " + xml_escape(rt.failed_stage) + ":" +
                                   element("pre", xml_escape(rt.error), "class=\"error\"")) +
                 "\n";
      }
      if (!rt.energy_error.empty()) {
        items +=
            element("li", who + ": energy failed:" + element("pre", xml_escape(rt.energy_error), "class=\"error\"")) +
            "\n";
      }
    }
  }
  return items.empty() ? "" : element("h2", "Failures") + "\n<ul>\n" + items + "</ul>\n";
}

/// An HTML table; the cells of `name_column` are runtime names, left-aligned after their colour.
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                  const std::vector<std::string>& row_classes, size_t name_column) {
  std::string out = "<div class=\"wide\"><table>\n<tr>";
  for (size_t i = 0; i < header.size(); ++i) {
    out += element("th", xml_escape(header[i]), i == name_column ? "class=\"name\"" : "");
  }
  out += "</tr>\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    out += row_classes[r].empty() ? "<tr>" : "<tr class=\"" + row_classes[r] + "\">";
    for (size_t i = 0; i < rows[r].size(); ++i) {
      const std::string text = i == name_column ? swatch(rows[r][i]) + xml_escape(rows[r][i]) : xml_escape(rows[r][i]);
      out += element("td", text, i == name_column ? "class=\"name\"" : "");
    }
    out += "</tr>\n";
  }
  return out + "</table></div>\n";
}

std::string results_section(const BenchReport& r) {
  const std::vector<std::string> header = results_header(has_sweep(r));
  const size_t name_column = has_sweep(r) ? 2 : 1;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> classes;
  for (const auto& p : r.points) {
    for (const auto& rt : p.runtimes) {
      rows.push_back(results_row(p, rt));
      classes.push_back(rt.ok() ? "" : "failed");
    }
  }
  return element("h2", "Results") + "\n" + table(header, rows, classes, name_column) +
         element("p", xml_escape(kResultsNote), "class=\"muted\"") + "\n";
}

/// Median per pipeline stage in ms, when any runtime has stages; "" otherwise.
std::string stages_section(const BenchReport& r) {
  const std::vector<std::string> stages = stage_names(r);
  if (stages.empty()) return "";
  std::vector<std::string> header = {"threads", "runtime"};
  header.insert(header.end(), stages.begin(), stages.end());
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : r.points) {
    for (const auto& rt : p.runtimes) {
      if (rt.stage_median_ms.empty()) continue;
      std::vector<std::string> row = {std::to_string(p.threads), rt.name};
      for (const auto& s : stages) row.push_back(stage_cell(rt, s));
      rows.push_back(row);
    }
  }
  return element("h3", "Median per stage (ms)") + "\n" + table(header, rows, std::vector<std::string>(rows.size()), 1);
}

std::string figure(const std::string& svg_text) { return "<figure>\n" + svg_text + "</figure>\n"; }

/// One box-and-strip plot per point; failed runtimes show their failed stage.
std::string distribution_charts(const BenchReport& r) {
  std::string out;
  for (const auto& p : r.points) {
    svg::BoxPlot plot{"Latency of every timed run: " + point_title(p), "latency per run (ms)", "ms", {}};
    for (const auto& rt : p.runtimes) {
      const std::string note = rt.ok() ? "" : "failed (" + rt.failed_stage + "): " + rt.error;
      plot.groups.push_back(
          {rt.name, svg::runtime_colour(rt.name), rt.ok() ? rt.times_ms : std::vector<double>{}, note});
    }
    out += figure(svg::box_strip_plot(plot));
  }
  return element("h3", "Latency distribution") + "\n" + out;
}

/// Each peer's median over edgemm's, per point; "" when no peer has a ratio.
std::string ratio_chart(const BenchReport& r) {
  svg::BarChart chart;
  chart.title = "Median latency relative to edgemm (above 1: edgemm is faster)";
  chart.axis_label = "runtime's median latency / edgemm's median latency (×)";
  chart.unit = "×";
  chart.reference = 1.0;
  chart.reference_label = "edgemm = 1";
  for (const auto& p : r.points) {
    for (const auto& rt : p.runtimes) {
      if (rt.name == "edgemm" || !rt.ok() || rt.edgemm_speedup <= 0) continue;
      chart.bars.push_back({rt.name + " · " + point_label(r, p), rt.edgemm_speedup, svg::runtime_colour(rt.name), {}});
    }
  }
  if (chart.bars.empty()) return "";
  return element("h3", "Speed relative to edgemm") + "\n" + figure(svg::bar_chart(chart));
}

/// Series per runtime (and thread count, when a sweep has several) of `value` over the swept
/// value, or over the thread count when there is no sweep.
template <typename Value>
std::vector<svg::Series> scaling_series(const BenchReport& r, Value value) {
  const bool sweep = has_sweep(r);
  const bool per_thread = sweep && distinct_threads(r) > 1;
  std::vector<int> threads;
  for (const auto& p : r.points) {
    if (std::find(threads.begin(), threads.end(), p.threads) == threads.end()) threads.push_back(p.threads);
  }
  std::vector<svg::Series> series;
  for (const auto& p : r.points) {
    for (const auto& rt : p.runtimes) {
      if (!rt.ok()) continue;
      const std::string name = per_thread ? rt.name + ", " + std::to_string(p.threads) + " threads" : rt.name;
      auto it = std::find_if(series.begin(), series.end(), [&](const svg::Series& s) { return s.name == name; });
      if (it == series.end()) {
        const bool dashed = per_thread && p.threads != threads.front();
        it = series.insert(series.end(), svg::Series{name, svg::runtime_colour(rt.name), dashed, {}});
      }
      it->points.emplace_back(sweep ? static_cast<double>(p.sweep_value) : p.threads, value(rt));
    }
  }
  return series;
}

/// The x axis of the scaling charts, with its unit.
std::string scaling_axis_label(const BenchReport& r) {
  if (!has_sweep(r)) return "intra-op threads";
  if (r.points[0].sweep_key == "batch") return "batch size (inputs per run)";
  return "input " + r.points[0].sweep_key + " (px)";
}

/// Median latency and peak RSS added over the swept value or the threads; "" when the report
/// has neither a sweep nor several thread counts.
std::string scaling_charts(const BenchReport& r) {
  const bool sweep = has_sweep(r);
  if (!sweep && distinct_threads(r) < 2) return "";
  const std::string over = sweep ? "input " + r.points[0].sweep_key : "intra-op threads";
  const std::string x_label = scaling_axis_label(r);
  svg::LineChart latency{"Median latency vs " + over, x_label, "median latency (ms)",
                         scaling_series(r, [](const RuntimeResult& rt) { return rt.latency.median; })};
  svg::LineChart memory{"Peak RSS added vs " + over, x_label, "peak RSS added (MiB)",
                        scaling_series(r, [](const RuntimeResult& rt) {
                          return static_cast<double>(rt.memory.peak_added()) / 1048576.0;
                        })};
  return element("h3", "Scaling") + "\n" + figure(svg::line_chart(latency)) + figure(svg::line_chart(memory));
}

/// For pipelines: each runtime's median per stage as bars with their share, per point.
std::string stage_charts(const BenchReport& r) {
  std::string out;
  for (const auto& p : r.points) {
    for (const auto& rt : p.runtimes) {
      double total = 0;
      for (const auto& [stage, ms] : rt.stage_median_ms) total += ms;
      if (total <= 0) continue;
      svg::BarChart chart{"Median per stage: " + rt.name + ", " + point_title(p), "median (ms)", " ms", 2, {}, "", {}};
      for (const auto& [stage, ms] : rt.stage_median_ms) {
        chart.bars.push_back({stage, ms, svg::runtime_colour(rt.name), ms / total});
      }
      out += figure(svg::bar_chart(chart));
    }
  }
  return out.empty() ? "" : element("h3", "Pipeline stages") + "\n" + out;
}

}  // namespace

std::string to_html(const BenchReport& r) {
  const std::string title = xml_escape("edgemm bench: " + r.subject);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n";
  out += element("title", title) + "\n" + element("style", kStyle) + "\n</head>\n<body>\n";
  out += element("h1", title) + "\n";
  out += summary_section(r);
  out += runtimes_section(r);
  out += failures_section(r);
  out += results_section(r);
  out += stages_section(r);
  out += element("h2", "Charts") + "\n";
  out += distribution_charts(r);
  out += ratio_chart(r);
  out += scaling_charts(r);
  out += stage_charts(r);
  return out + "</body>\n</html>\n";
}

}  // namespace edgemm::bench
