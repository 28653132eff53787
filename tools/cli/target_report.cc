#include "target_report.h"

#include <iomanip>
#include <iostream>

#include "cli_common.h"

namespace edgemm::cli {

namespace {

using targets::Reason;
using targets::TargetReport;

nlohmann::json reason_json(const Reason& r) {
  nlohmann::json j = {{"kind", targets::reason_kind_name(r.kind)}, {"text", r.text}};
  j["fix"] = r.fix.empty() ? nlohmann::json() : nlohmann::json(r.fix);
  j["source"] = r.source.empty() ? nlohmann::json() : nlohmann::json(r.source);
  j["profile_line"] = r.line > 0 ? nlohmann::json(r.line) : nlohmann::json();
  return j;
}

int64_t crossing_bytes(const TargetReport& r) {
  int64_t total = 0;
  for (const targets::Crossing& c : r.crossings) total += c.bytes.value_or(0);
  return total;
}

std::string node_label(const targets::NodeVerdict& v) {
  return (v.domain.empty() ? "" : v.domain + ".") + v.op_type + " '" + v.node + "'";
}

}  // namespace

std::string platforms_dir(const std::string& dir) {
  return dir.empty() ? default_repo_dir("EDGEMM_PLATFORMS_DIR", "platforms") : dir;
}

Expected<targets::PlatformProfile> load_platform(const std::string& dir, const std::string& name) {
  return targets::load_target(platforms_dir(dir), name);
}

nlohmann::json target_report_json(const TargetReport& report, const targets::PlatformProfile& profile,
                                  const std::string& model) {
  nlohmann::json j;
  j["schema"] = "edgemm.target_report/1";
  j["model"] = model;
  j["target"] = report.target;
  j["title"] = report.title;
  j["converter"] = profile.converter;
  j["profile"] = profile.path;
  j["model_opset"] = report.model_opset;
  j["model_issues"] = nlohmann::json::array();
  for (const Reason& r : report.model_issues) j["model_issues"].push_back(reason_json(r));
  j["summary"] = {{"npu_nodes", report.npu_nodes},
                  {"cpu_nodes", report.cpu_nodes},
                  {"constant_nodes", report.constant_nodes},
                  {"npu_partitions", report.partition_count(true)},
                  {"cpu_partitions", report.partition_count(false)},
                  {"crossings", report.crossings.size()},
                  {"crossing_bytes", crossing_bytes(report)}};
  j["fixes"] = nlohmann::json::array();
  for (const auto& [fix, count] : report.fixes) j["fixes"].push_back({{"fix", fix}, {"reasons", count}});
  j["nodes"] = nlohmann::json::array();
  for (const targets::NodeVerdict& v : report.nodes) {
    nlohmann::json n = {{"node", v.node},
                        {"op_type", v.op_type},
                        {"domain", v.domain},
                        {"placement", v.constant ? "constant"
                                      : v.npu    ? "npu"
                                                 : "cpu"},
                        {"partition", v.partition}};
    n["reasons"] = nlohmann::json::array();
    for (const Reason& r : v.reasons) n["reasons"].push_back(reason_json(r));
    j["nodes"].push_back(n);
  }
  j["crossings"] = nlohmann::json::array();
  for (const targets::Crossing& c : report.crossings) {
    j["crossings"].push_back({{"tensor", c.tensor},
                              {"from", c.from_npu ? "npu" : "cpu"},
                              {"to", c.from_npu ? "cpu" : "npu"},
                              {"bytes", c.bytes ? nlohmann::json(*c.bytes) : nlohmann::json()}});
  }
  return j;
}

void print_target_report(const TargetReport& report, const targets::PlatformProfile& profile,
                         const std::string& model) {
  std::cout << model << " on " << report.target << ": " << report.title << " (converter " << profile.converter
            << "; profile " << profile.path << ")\n";
  std::cout << "  NPU-eligible: " << report.npu_nodes << " of " << report.npu_nodes + report.cpu_nodes
            << " nodes; CPU fallback: " << report.cpu_nodes << " (" << report.constant_nodes
            << " Constant nodes not counted)\n";
  std::cout << "  partitions: " << report.partition_count(true) << " NPU, " << report.partition_count(false) << " CPU; "
            << report.crossings.size() << " tensors cross NPU<->CPU";
  if (const int64_t bytes = crossing_bytes(report); bytes > 0) {
    std::cout << " (" << std::fixed << std::setprecision(2) << bytes / 1048576.0 << " MiB with static shapes)";
  }
  std::cout << "\n";
  for (const Reason& r : report.model_issues) {
    std::cout << "  whole model: " << r.text << " [fix: " << r.fix << "] (" << r.source << ")\n";
  }
  if (report.cpu_nodes > 0) std::cout << "  CPU fallbacks:\n";
  for (const targets::NodeVerdict& v : report.nodes) {
    if (v.npu || v.constant) continue;
    std::cout << "    " << node_label(v) << "\n";
    for (const Reason& r : v.reasons) {
      std::cout << "      " << targets::reason_kind_name(r.kind) << ": " << r.text;
      if (!r.fix.empty()) std::cout << " [fix: " << r.fix << "]";
      if (r.line > 0) std::cout << " (profile line " << r.line << ")";
      std::cout << "\n";
    }
  }
  if (!report.crossings.empty()) std::cout << "  crossing tensors:\n";
  for (const targets::Crossing& c : report.crossings) {
    std::cout << "    " << c.tensor << " " << (c.from_npu ? "NPU->CPU" : "CPU->NPU");
    if (c.bytes) std::cout << " " << *c.bytes << " bytes";
    std::cout << "\n";
  }
  std::cout << "  rewrites that would remove reasons (edgemm convert --target " << report.target
            << "):" << (report.fixes.empty() ? " none" : "") << "\n";
  for (const auto& [fix, count] : report.fixes) std::cout << "    " << fix << ": " << count << "\n";
  std::cout << "  No NPU was run: verdicts encode the vendor documentation cited in the profile.\n";
}

}  // namespace edgemm::cli
