#include "target_report.h"

#include <algorithm>
#include <iomanip>
#include <iostream>

#include "cli_common.h"

namespace edgemm::cli {

namespace {

using targets::Placement;
using targets::Reason;
using targets::TargetReport;

/// "NPU" for "npu".
std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::toupper(c); });
  return text;
}

nlohmann::json reason_json(const Reason& r) {
  nlohmann::json j = {{"kind", targets::reason_kind_name(r.kind)}, {"text", r.text}};
  j["fix"] = r.fix.empty() ? nlohmann::json() : nlohmann::json(r.fix);
  j["source"] = r.source.empty() ? nlohmann::json() : nlohmann::json(r.source);
  j["profile_line"] = r.line > 0 ? nlohmann::json(r.line) : nlohmann::json();
  return j;
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
  j["schema"] = "edgemm.target_report/2";
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
                  {"unknown_nodes", report.unknown_nodes},
                  {"constant_nodes", report.constant_nodes},
                  {"npu_partitions", report.partition_count(Placement::kNpu)},
                  {"cpu_partitions", report.partition_count(Placement::kCpu)},
                  {"unknown_partitions", report.partition_count(Placement::kUnknown)},
                  {"crossings", report.crossing_count(true)},
                  {"unknown_crossings", report.crossing_count(false)},
                  {"crossing_bytes", report.crossing_bytes()}};
  j["fixes"] = nlohmann::json::array();
  for (const auto& [fix, count] : report.fixes) j["fixes"].push_back({{"fix", fix}, {"reasons", count}});
  j["nodes"] = nlohmann::json::array();
  for (const targets::NodeVerdict& v : report.nodes) {
    nlohmann::json n = {{"node", v.node},
                        {"op_type", v.op_type},
                        {"domain", v.domain},
                        {"placement", v.constant ? "constant" : targets::placement_name(v.placement)},
                        {"partition", v.partition}};
    n["reasons"] = nlohmann::json::array();
    for (const Reason& r : v.reasons) n["reasons"].push_back(reason_json(r));
    j["nodes"].push_back(n);
  }
  j["crossings"] = nlohmann::json::array();
  for (const targets::Crossing& c : report.crossings) {
    j["crossings"].push_back({{"tensor", c.tensor},
                              {"from", targets::placement_name(c.from)},
                              {"to", targets::placement_name(c.to)},
                              {"bytes", c.bytes ? nlohmann::json(*c.bytes) : nlohmann::json()}});
  }
  return j;
}

void print_target_report(const TargetReport& report, const targets::PlatformProfile& profile,
                         const std::string& model) {
  std::cout << model << " on " << report.target << ": " << report.title << " (converter " << profile.converter
            << "; profile " << profile.path << ")\n";
  std::cout << "  " << placement_summary(report) << " (" << report.constant_nodes << " Constant nodes not counted)\n";
  std::cout << "  partitions: " << report.partition_count(Placement::kNpu) << " NPU, "
            << report.partition_count(Placement::kCpu) << " CPU, " << report.partition_count(Placement::kUnknown)
            << " unknown; " << report.crossing_count(true) << " tensors cross NPU<->CPU";
  if (const int64_t bytes = report.crossing_bytes(); bytes > 0) {
    std::cout << " (" << std::fixed << std::setprecision(2) << bytes / 1048576.0 << " MiB with static shapes)";
  }
  if (const int unknown = report.crossing_count(false); unknown > 0) {
    std::cout << ", " << unknown << " more to or from nodes of unknown support";
  }
  std::cout << "\n";
  for (const Reason& r : report.model_issues) {
    std::cout << "  whole model: " << r.text << " [fix: " << r.fix << "] (" << r.source << ")\n";
  }
  for (const Placement placement : {Placement::kCpu, Placement::kUnknown}) {
    const int count = placement == Placement::kCpu ? report.cpu_nodes : report.unknown_nodes;
    if (count > 0) {
      std::cout << (placement == Placement::kCpu ? "  CPU fallbacks:\n"
                                                 : "  support unknown (the documentation does not say):\n");
    }
    for (const targets::NodeVerdict& v : report.nodes) {
      if (v.constant || v.placement != placement) continue;
      std::cout << "    " << node_label(v) << "\n";
      for (const Reason& r : v.reasons) {
        std::cout << "      " << targets::reason_kind_name(r.kind) << ": " << r.text;
        if (!r.fix.empty()) std::cout << " [fix: " << r.fix << "]";
        if (r.line > 0) std::cout << " (profile line " << r.line << ")";
        std::cout << "\n";
      }
    }
  }
  if (!report.crossings.empty()) std::cout << "  crossing tensors:\n";
  for (const targets::Crossing& c : report.crossings) {
    std::cout << "    " << c.tensor << " " << upper(targets::placement_name(c.from)) << "->"
              << upper(targets::placement_name(c.to));
    if (c.bytes) std::cout << " " << *c.bytes << " bytes";
    std::cout << "\n";
  }
  std::cout << "  rewrites that would remove reasons (edgemm convert --target " << report.target
            << "):" << (report.fixes.empty() ? " none" : "") << "\n";
  for (const auto& [fix, count] : report.fixes) std::cout << "    " << fix << ": " << count << "\n";
  std::cout << "  No NPU was run: verdicts encode the vendor documentation cited in the profile.\n";
}

std::string placement_summary(const TargetReport& report) {
  const int total = report.npu_nodes + report.cpu_nodes + report.unknown_nodes;
  return "NPU-eligible: " + std::to_string(report.npu_nodes) + " of " + std::to_string(total) +
         " nodes; CPU fallback: " + std::to_string(report.cpu_nodes) +
         "; support unknown: " + std::to_string(report.unknown_nodes);
}

}  // namespace edgemm::cli
