#pragma once
/// \file target_report.h
/// `edgemm inspect --target` and `edgemm convert --target`: loading a platform profile by name and
/// printing targets::TargetReport as text or JSON (schema edgemm.target_report/2).

#include <nlohmann/json.hpp>
#include <string>

#include "edgemm/status.h"
#include "edgemm/tools/targets.h"

namespace edgemm::cli {

/// The folder of the platform profiles: `dir` when non-empty, else $EDGEMM_PLATFORMS_DIR, else
/// platforms/ of the source tree (default_repo_dir).
std::string platforms_dir(const std::string& dir);

/// Loads target `name` from platforms_dir(`dir`). Errors: those of targets::load_target (an
/// unknown name lists the known ones; a malformed file names its line).
Expected<targets::PlatformProfile> load_platform(const std::string& dir, const std::string& name);

/// The report as JSON: {"schema", "model", "target", "title", "converter", "profile",
/// "model_opset", "model_issues", "summary" {npu_nodes, cpu_nodes, unknown_nodes,
/// constant_nodes, npu_partitions, cpu_partitions, unknown_partitions, crossings (NPU<->CPU),
/// unknown_crossings (with a side of unknown support), crossing_bytes (NPU<->CPU)}, "fixes",
/// "nodes" (placement "npu", "cpu", "unknown" or "constant"), "crossings" {tensor, from, to, bytes}}.
nlohmann::json target_report_json(const targets::TargetReport& report, const targets::PlatformProfile& profile,
                                  const std::string& model);

/// Prints the report for a terminal: the summary, each CPU fallback and each node of unknown
/// support with its reasons, fixes and sources, the crossing tensors, and the fixes `convert
/// --target` would apply.
void print_target_report(const targets::TargetReport& report, const targets::PlatformProfile& profile,
                         const std::string& model);

/// "NPU-eligible: 3 of 10 nodes; CPU fallback: 2; support unknown: 5".
std::string placement_summary(const targets::TargetReport& report);

}  // namespace edgemm::cli
