#include "edgemm/tools/model_profile.h"

#include <algorithm>

#include "bench/format.h"
#include "bench/html.h"
#include "bench/svg.h"

namespace edgemm::bench {

namespace {

constexpr const char* kBarColour = "#0072B2";  ///< edgemm's colour in bench reports
constexpr size_t kChartNodes = 25;             ///< slowest nodes shown in the node chart

std::string summary_section(const ProfileReport& r) {
  std::string items;
  auto item = [&](const std::string& name, const std::string& value) {
    items += "<li><b>" + name + ":</b> " + svg::xml_escape(value) + "</li>\n";
  };
  item("Inputs", r.inputs);
  item("Runs", std::to_string(r.threads) + " thread(s), " + std::to_string(r.warmup) + " warm-up and " +
                   std::to_string(r.iterations) + " profiled runs; node times are medians over the profiled runs");
  item("Wall time", "median " + fixed(r.median_wall_us / 1e3, 3) + " ms; sum of node medians " +
                        fixed(r.node_sum_us / 1e3, 3) + " ms; outside the nodes " + fixed(r.overhead_us / 1e3, 3) +
                        " ms");
  item("Work", fixed(static_cast<double>(r.flops) / 1e9, 3) + " GFLOP, achieved " + fixed(r.gflops_per_s, 1) +
                   " GFLOP/s; " + fixed(static_cast<double>(r.bytes) / 1e6, 1) +
                   " MB moved (inputs read + outputs written by each node, a lower bound)");
  return "<ul>\n" + items + "</ul>\n";
}

std::string op_type_charts(const ProfileReport& r) {
  svg::BarChart time;
  time.title = "Time by op type (sum of node medians, share of all nodes)";
  time.axis_label = "time (ms)";
  time.unit = " ms";
  time.value_digits = 2;
  svg::BarChart rate;
  rate.title = "Achieved GFLOP/s by op type";
  rate.axis_label = "GFLOP/s (FLOPs / time)";
  rate.value_digits = 1;
  for (const OpTypeStats& s : r.op_types) {
    const std::string label = s.op_type + " ×" + std::to_string(s.count);
    time.bars.push_back({label, s.time_us / 1e3, kBarColour, s.share_percent / 100.0});
    rate.bars.push_back({label, s.gflops_per_s, kBarColour, std::nullopt});
  }
  return html_figure(svg::bar_chart(time)) + html_figure(svg::bar_chart(rate));
}

std::string node_chart(const ProfileReport& r) {
  std::vector<const NodeStats*> slowest;
  for (const NodeStats& n : r.nodes) slowest.push_back(&n);
  std::stable_sort(slowest.begin(), slowest.end(),
                   [](const NodeStats* a, const NodeStats* b) { return a->median_us > b->median_us; });
  slowest.resize(std::min(slowest.size(), kChartNodes));
  svg::BarChart chart;
  chart.title = "The " + std::to_string(slowest.size()) + " slowest nodes (median time, share of all nodes)";
  chart.axis_label = "median time (ms)";
  chart.unit = " ms";
  chart.value_digits = 3;
  for (const NodeStats* n : slowest) {
    const std::string name = n->node.empty() ? "#" + std::to_string(n->index) : n->node;
    chart.bars.push_back({name + " (" + n->op_type + ")", n->median_us / 1e3, kBarColour, n->share_percent / 100.0});
  }
  return html_figure(svg::bar_chart(chart));
}

/// A table whose column `name_column` (the op type or the node name) is left-aligned.
std::string table_section(const std::string& title, const TextTable& table, size_t name_column) {
  const std::vector<std::vector<std::string>> rows(table.begin() + 1, table.end());
  return html_element("h2", title) + "\n" +
         html_table(table.front(), rows, std::vector<std::string>(rows.size()), name_column, nullptr);
}

}  // namespace

std::string profile_to_html(const ProfileReport& r) {
  std::string body = summary_section(r);
  body += html_element("h2", "Charts") + "\n" + op_type_charts(r) + node_chart(r);
  body += table_section("Op types", op_type_table(r), 0);
  body += table_section("Nodes by time", node_table(r, 0), 1);
  return html_page("edgemm profile: " + r.model, body);
}

}  // namespace edgemm::bench
