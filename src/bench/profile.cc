#include "edgemm/tools/model_profile.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>

#include "bench/format.h"
#include "bench/profile_json.h"

namespace edgemm::bench {

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/// GFLOP/s of `flops` in `us` microseconds (0 for no time).
double gflops_per_s(int64_t flops, double us) { return us > 0 ? static_cast<double>(flops) / us / 1e3 : 0; }

double percent(double part, double whole) { return whole > 0 ? 100 * part / whole : 0; }

std::vector<const NodeProfile*> main_graph_nodes(const ProfiledSample& sample) {
  std::vector<const NodeProfile*> nodes;
  for (const NodeProfile& n : sample.nodes) {
    if (n.depth == 0) nodes.push_back(&n);
  }
  return nodes;
}

/// Per node: the first run's description with the median duration over all runs.
Expected<std::vector<NodeStats>> node_stats(const std::vector<ProfiledSample>& samples) {
  const std::vector<const NodeProfile*> first = main_graph_nodes(samples.front());
  std::vector<std::vector<double>> durations(first.size());
  for (size_t r = 0; r < samples.size(); ++r) {
    const std::vector<const NodeProfile*> run = main_graph_nodes(samples[r]);
    if (run.size() != first.size()) {
      return make_error(StatusCode::kInvalidArgument, "profiled run " + std::to_string(r) + " has " +
                                                          std::to_string(run.size()) + " main-graph nodes, run 0 has " +
                                                          std::to_string(first.size()));
    }
    for (size_t i = 0; i < run.size(); ++i) {
      if (run[i]->node != first[i]->node || run[i]->op_type != first[i]->op_type) {
        return make_error(StatusCode::kInvalidArgument, "profiled run " + std::to_string(r) + " ran " +
                                                            run[i]->op_type + " '" + run[i]->node + "' at position " +
                                                            std::to_string(i) + " where run 0 ran " +
                                                            first[i]->op_type + " '" + first[i]->node + "'");
      }
      durations[i].push_back(run[i]->duration_us);
    }
  }
  std::vector<NodeStats> stats;
  for (size_t i = 0; i < first.size(); ++i) {
    const NodeProfile& n = *first[i];
    const double us = median(durations[i]);
    stats.push_back({static_cast<int>(i), n.node, n.op_type, n.kernel, n.output_shapes, us, 0, n.flops,
                     gflops_per_s(n.flops, us), n.bytes});
  }
  return stats;
}

std::vector<OpTypeStats> op_type_stats(const std::vector<NodeStats>& nodes, double node_sum_us) {
  std::map<std::string, OpTypeStats> by_op;
  for (const NodeStats& n : nodes) {
    OpTypeStats& s = by_op[n.op_type];
    s.op_type = n.op_type;
    ++s.count;
    s.time_us += n.median_us;
    s.flops += n.flops;
    s.bytes += n.bytes;
  }
  std::vector<OpTypeStats> stats;
  for (auto& [op, s] : by_op) {
    s.share_percent = percent(s.time_us, node_sum_us);
    s.gflops_per_s = gflops_per_s(s.flops, s.time_us);
    stats.push_back(s);
  }
  std::stable_sort(stats.begin(), stats.end(),
                   [](const OpTypeStats& a, const OpTypeStats& b) { return a.time_us > b.time_us; });
  return stats;
}

std::string shapes_text(const std::vector<Shape>& shapes) {
  std::string text;
  for (const Shape& s : shapes) text += shape_to_string(s);
  return text;
}

/// A Markdown table; inside cells '|' is escaped, '<' written as &lt; (no HTML from node names) and line breaks become
/// spaces.
std::string markdown_table(const TextTable& table) {
  std::string out;
  for (size_t r = 0; r < table.size(); ++r) {
    out += "|";
    for (const std::string& cell : table[r]) {
      std::string escaped;
      for (char c : cell) {
        if (c == '|') {
          escaped += "\\|";
        } else if (c == '<') {
          escaped += "&lt;";
        } else {
          escaped += (c == '\n' || c == '\r') ? ' ' : c;
        }
      }
      out += " " + escaped + " |";
    }
    out += "\n";
    if (r == 0) {
      out += "|";
      for (size_t c = 0; c < table[r].size(); ++c) out += " --- |";
      out += "\n";
    }
  }
  return out;
}

nlohmann::json node_json(const NodeStats& n) {
  return {{"index", n.index},
          {"node", n.node},
          {"op_type", n.op_type},
          {"kernel", n.kernel},
          {"output_shapes", n.output_shapes},
          {"median_us", n.median_us},
          {"share_percent", n.share_percent},
          {"flops", n.flops},
          {"gflops_per_s", n.gflops_per_s},
          {"bytes", n.bytes}};
}

nlohmann::json op_type_json(const OpTypeStats& s) {
  return {{"op_type", s.op_type}, {"count", s.count},
          {"time_us", s.time_us}, {"share_percent", s.share_percent},
          {"flops", s.flops},     {"gflops_per_s", s.gflops_per_s},
          {"bytes", s.bytes}};
}

NodeStats node_from_json(const nlohmann::json& j) {
  return {j.at("index").get<int>(),
          j.at("node").get<std::string>(),
          j.at("op_type").get<std::string>(),
          j.at("kernel").get<std::string>(),
          j.at("output_shapes").get<std::vector<Shape>>(),
          j.at("median_us").get<double>(),
          j.at("share_percent").get<double>(),
          j.at("flops").get<int64_t>(),
          j.at("gflops_per_s").get<double>(),
          j.at("bytes").get<int64_t>()};
}

OpTypeStats op_type_from_json(const nlohmann::json& j) {
  return {j.at("op_type").get<std::string>(),  j.at("count").get<int>(),     j.at("time_us").get<double>(),
          j.at("share_percent").get<double>(), j.at("flops").get<int64_t>(), j.at("gflops_per_s").get<double>(),
          j.at("bytes").get<int64_t>()};
}

}  // namespace

Expected<std::vector<ProfiledSample>> collect_profiles(const Inferencer& inferencer, const NamedTensors& inputs,
                                                       int warmup, int iterations) {
  if (warmup < 0 || iterations < 1) {
    return make_error(StatusCode::kInvalidArgument, "profiling needs warmup >= 0 and iterations >= 1, got " +
                                                        std::to_string(warmup) + " and " + std::to_string(iterations));
  }
  for (int r = 0; r < warmup; ++r) EDGEMM_RETURN_IF_ERROR(inferencer.run(inputs).status());
  std::vector<ProfiledSample> samples;
  for (int r = 0; r < iterations; ++r) {
    const auto start = std::chrono::steady_clock::now();
    EDGEMM_ASSIGN_OR_RETURN(ProfiledRun run, inferencer.run_profiled(inputs));
    const double wall_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    samples.push_back({wall_us, std::move(run.nodes)});
  }
  return samples;
}

size_t median_sample(const std::vector<ProfiledSample>& samples) {
  std::vector<size_t> order(samples.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return samples[a].wall_us < samples[b].wall_us; });
  return order[(order.size() - 1) / 2];
}

Expected<ProfileReport> aggregate_profiles(const std::vector<ProfiledSample>& samples) {
  if (samples.empty()) return make_error(StatusCode::kInvalidArgument, "there are no profiled runs to aggregate");
  ProfileReport report;
  EDGEMM_ASSIGN_OR_RETURN(report.nodes, node_stats(samples));
  report.iterations = static_cast<int>(samples.size());
  std::vector<double> walls;
  for (const ProfiledSample& s : samples) walls.push_back(s.wall_us);
  report.median_wall_us = median(walls);
  for (const NodeStats& n : report.nodes) {
    report.node_sum_us += n.median_us;
    report.flops += n.flops;
    report.bytes += n.bytes;
  }
  for (NodeStats& n : report.nodes) n.share_percent = percent(n.median_us, report.node_sum_us);
  report.overhead_us = report.median_wall_us - report.node_sum_us;
  report.gflops_per_s = gflops_per_s(report.flops, report.median_wall_us);
  report.op_types = op_type_stats(report.nodes, report.node_sum_us);
  return report;
}

nlohmann::json profile_report_to_json(const ProfileReport& report) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodeStats& n : report.nodes) nodes.push_back(node_json(n));
  nlohmann::json op_types = nlohmann::json::array();
  for (const OpTypeStats& s : report.op_types) op_types.push_back(op_type_json(s));
  return {{"schema", kProfileSchema},
          {"model", report.model},
          {"inputs", report.inputs},
          {"threads", report.threads},
          {"warmup", report.warmup},
          {"iterations", report.iterations},
          {"median_wall_us", report.median_wall_us},
          {"node_sum_us", report.node_sum_us},
          {"overhead_us", report.overhead_us},
          {"flops", report.flops},
          {"gflops_per_s", report.gflops_per_s},
          {"bytes", report.bytes},
          {"nodes", std::move(nodes)},
          {"op_types", std::move(op_types)}};
}

std::string profile_report_json(const ProfileReport& report) {
  return profile_report_to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

Expected<ProfileReport> profile_report_from_json(const nlohmann::json& json) {
  try {
    if (!json.is_object() || !json.contains("schema") || json.at("schema") != kProfileSchema) {
      return make_error(StatusCode::kInvalidArgument,
                        std::string("not a profile report: \"schema\" must be \"") + kProfileSchema + "\"");
    }
    ProfileReport r;
    r.model = json.at("model").get<std::string>();
    r.inputs = json.at("inputs").get<std::string>();
    r.threads = json.at("threads").get<int>();
    r.warmup = json.at("warmup").get<int>();
    r.iterations = json.at("iterations").get<int>();
    r.median_wall_us = json.at("median_wall_us").get<double>();
    r.node_sum_us = json.at("node_sum_us").get<double>();
    r.overhead_us = json.at("overhead_us").get<double>();
    r.flops = json.at("flops").get<int64_t>();
    r.gflops_per_s = json.at("gflops_per_s").get<double>();
    r.bytes = json.at("bytes").get<int64_t>();
    for (const auto& n : json.at("nodes")) r.nodes.push_back(node_from_json(n));
    for (const auto& s : json.at("op_types")) r.op_types.push_back(op_type_from_json(s));
    return r;
  } catch (const nlohmann::json::exception& e) {
    return make_error(StatusCode::kInvalidArgument, std::string("malformed profile report: ") + e.what());
  }
}

TextTable node_table(const ProfileReport& report, size_t top) {
  std::vector<const NodeStats*> order;
  for (const NodeStats& n : report.nodes) order.push_back(&n);
  std::stable_sort(order.begin(), order.end(),
                   [](const NodeStats* a, const NodeStats* b) { return a->median_us > b->median_us; });
  if (top > 0 && order.size() > top) order.resize(top);
  TextTable table{
      {"#", "node", "op type", "kernel", "output shapes", "median ms", "share %", "GFLOP", "GFLOP/s", "MB"}};
  for (const NodeStats* n : order) {
    table.push_back({std::to_string(n->index), n->node, n->op_type, n->kernel, shapes_text(n->output_shapes),
                     fixed(n->median_us / 1e3, 3), fixed(n->share_percent, 1), fixed(n->flops / 1e9, 3),
                     fixed(n->gflops_per_s, 1), fixed(n->bytes / 1e6, 2)});
  }
  return table;
}

TextTable op_type_table(const ProfileReport& report) {
  TextTable table{{"op type", "nodes", "time ms", "share %", "GFLOP", "GFLOP/s", "MB"}};
  for (const OpTypeStats& s : report.op_types) {
    table.push_back({s.op_type, std::to_string(s.count), fixed(s.time_us / 1e3, 3), fixed(s.share_percent, 1),
                     fixed(s.flops / 1e9, 3), fixed(s.gflops_per_s, 1), fixed(s.bytes / 1e6, 2)});
  }
  return table;
}

std::string profile_report_markdown(const ProfileReport& report, size_t top) {
  std::string md = "# Profile of " + report.model + "\n\n";
  md += "- inputs: " + report.inputs + "\n";
  md += "- threads: " + std::to_string(report.threads) + ", warmup runs: " + std::to_string(report.warmup) +
        ", profiled runs: " + std::to_string(report.iterations) + "\n";
  md += "- median wall time: " + fixed(report.median_wall_us / 1e3, 3) +
        " ms; sum of node medians: " + fixed(report.node_sum_us / 1e3, 3) +
        " ms; outside the nodes (framework overhead): " + fixed(report.overhead_us / 1e3, 3) + " ms\n";
  md += "- FLOPs: " + fixed(report.flops / 1e9, 3) + " G, achieved " + fixed(report.gflops_per_s, 1) +
        " GFLOP/s; bytes moved: " + fixed(report.bytes / 1e6, 2) + " MB\n\n";
  const bool all = top == 0 || top >= report.nodes.size();
  md += all ? "## Nodes by time\n\n" : "## Top " + std::to_string(top) + " nodes by time\n\n";
  md += markdown_table(node_table(report, top));
  md += "\n## Op types by time\n\n" + markdown_table(op_type_table(report));
  return md;
}

}  // namespace edgemm::bench
