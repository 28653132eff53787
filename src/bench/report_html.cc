#include "bench/report_html.h"

#include <algorithm>
#include <set>

#include "bench/html.h"
#include "bench/report_markdown.h"
#include "bench/svg.h"

namespace edgemm::bench {

namespace {

using svg::xml_escape;

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
  std::string out = html_element("p",
                                 "Created " + xml_escape(r.created) + " by edgemm " + xml_escape(r.edgemm_version) +
                                     " (" + xml_escape(r.kind) + " benchmark)",
                                 "class=\"muted\"");
  out += "<ul>\n";
  out += html_element("li", "<b>Machine:</b> " + xml_escape(machine_summary(r))) + "\n";
  out += html_element("li", "<b>Inputs:</b> " + xml_escape(inputs_summary(r))) + "\n";
  out += html_element("li", "<b>Runs:</b> " + xml_escape(runs_summary(r))) + "\n";
  out += html_element("li", xml_escape(r.energy_note)) + "\n";
  out += "</ul>\n";
  return out + html_element("h2", "Command") + "\n" + html_element("pre", xml_escape(r.command)) + "\n";
}

/// One line per distinct runtime, version and settings.
std::string runtimes_section(const BenchReport& r) {
  std::string items;
  std::set<std::string> seen;
  for (const auto& p : r.points) {
    for (const auto& rt : p.runtimes) {
      const std::string item =
          html_element("li", swatch(rt.name) + "<b>" + xml_escape(rt.name) + "</b> " + xml_escape(rt.version) + ": " +
                                 html_element("code", xml_escape(rt.settings.dump())));
      if (seen.insert(item).second) items += item + "\n";
    }
  }
  return html_element("h2", "Runtimes") + "\n<ul>\n" + items + "</ul>\n";
}

/// Runtimes that could not start, load or run, and energy meters that failed; "" when none.
std::string failures_section(const BenchReport& r) {
  std::string items;
  for (const auto& p : r.points) {
    for (const auto& rt : p.runtimes) {
      const std::string who = "<b>" + xml_escape(rt.name) + "</b> at " + xml_escape(point_title(p));
      if (!rt.ok()) {
        items += html_element("li", who + " could not " + xml_escape(rt.failed_stage) + ":" +
                                        html_element("pre", xml_escape(rt.error), "class=\"error\"")) +
                 "\n";
      }
      if (!rt.energy_error.empty()) {
        items +=
            html_element(
                "li", who + ": energy failed:" + html_element("pre", xml_escape(rt.energy_error), "class=\"error\"")) +
            "\n";
      }
    }
  }
  return items.empty() ? "" : html_element("h2", "Failures") + "\n<ul>\n" + items + "</ul>\n";
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
  return html_element("h2", "Results") + "\n" + html_table(header, rows, classes, name_column, swatch) +
         html_element("p", xml_escape(kResultsNote), "class=\"muted\"") + "\n";
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
  return html_element("h3", "Median per stage (ms)") + "\n" +
         html_table(header, rows, std::vector<std::string>(rows.size()), 1, swatch);
}

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
    out += html_figure(svg::box_strip_plot(plot));
  }
  return html_element("h3", "Latency distribution") + "\n" + out;
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
  return html_element("h3", "Speed relative to edgemm") + "\n" + html_figure(svg::bar_chart(chart));
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
  return html_element("h3", "Scaling") + "\n" + html_figure(svg::line_chart(latency)) +
         html_figure(svg::line_chart(memory));
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
      out += html_figure(svg::bar_chart(chart));
    }
  }
  return out.empty() ? "" : html_element("h3", "Pipeline stages") + "\n" + out;
}

}  // namespace

std::string to_html(const BenchReport& r) {
  std::string out;
  out += summary_section(r);
  out += runtimes_section(r);
  out += failures_section(r);
  out += results_section(r);
  out += stages_section(r);
  out += html_element("h2", "Charts") + "\n";
  out += distribution_charts(r);
  out += ratio_chart(r);
  out += scaling_charts(r);
  out += stage_charts(r);
  return html_page("edgemm bench: " + r.subject, out);
}

}  // namespace edgemm::bench
