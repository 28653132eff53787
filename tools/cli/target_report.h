#pragma once
/// \file target_report.h
/// `edgemm inspect --target` and `edgemm convert --target`: loading a platform profile by name and
/// printing targets::TargetReport as text or JSON (schema edgemm.target_report/1).

#include <nlohmann/json.hpp>
#include <string>

#include "edgemm/status.h"
#include "targets/eligibility.h"
#include "targets/profile.h"

namespace edgemm::cli {

/// The folder of the platform profiles: `dir` when non-empty, else $EDGEMM_PLATFORMS_DIR, else
/// platforms/ of the source tree (default_repo_dir).
std::string platforms_dir(const std::string& dir);

/// Loads target `name` from platforms_dir(`dir`). Errors: those of targets::load_target (an
/// unknown name lists the known ones; a malformed file names its line).
Expected<targets::PlatformProfile> load_platform(const std::string& dir, const std::string& name);

/// The report as JSON: {"schema", "model", "target", "title", "converter", "profile",
/// "model_opset", "model_issues", "summary" {npu_nodes, cpu_nodes, npu_partitions,
/// cpu_partitions, crossings, crossing_bytes}, "fixes", "nodes", "crossings"}.
nlohmann::json target_report_json(const targets::TargetReport& report, const targets::PlatformProfile& profile,
                                  const std::string& model);

/// Prints the report for a terminal: the summary, each CPU fallback with its reasons, fixes and
/// sources, the crossing tensors, and the fixes `convert --target` would apply.
void print_target_report(const targets::TargetReport& report, const targets::PlatformProfile& profile,
                         const std::string& model);

}  // namespace edgemm::cli
