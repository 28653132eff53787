#pragma once
/// \file prune_heads.h
/// The attention-head half of `edgemm prune` (cmd_prune.cc): which heads to remove (an explicit
/// list, or the lowest-scoring ones on calibration data), the rewrite, and its report.

#include <string>
#include <vector>

#include "cli_common.h"
#include "edgemm/onnx_model.h"
#include "edgemm/status.h"

namespace edgemm::cli {

/// Head pruning options of `edgemm prune`.
struct HeadPruneArgs {
  std::string heads;               ///< --heads "L:h,L:h": explicit heads to remove
  double keep_ratio = 0;           ///< --heads-keep-ratio in (0, 1]; 0 = not given
  std::string rank = "layer";      ///< --heads-rank: layer or global
  std::vector<std::string> calib;  ///< --calib: .npy model inputs, images, folders or manifests
  std::string package;             ///< --package: CLIP package whose preprocessing images get
  int threads = 0;                 ///< --threads for the scoring runs (0 = all cores)
  /// True when any head pruning option asks for pruning.
  bool requested() const { return !heads.empty() || keep_ratio > 0; }
};

/// Adds --heads, --heads-keep-ratio, --heads-rank, --calib, --package and --threads to `cmd`, with
/// their exclusions (--heads excludes --heads-keep-ratio; --calib needs --heads-keep-ratio and the
/// other way round; --heads-rank and --package need --heads-keep-ratio).
void add_head_prune_options(CLI::App* cmd, HeadPruneArgs& args);

/// Removes the requested heads from `model` (read from `model_path`): scores them first when
/// --heads-keep-ratio asks for it. Returns the JSON report {"layers", "heads_before",
/// "heads_after", "weight_bytes_before", "weight_bytes_after", "removed": [{"layer", "heads"}],
/// "per_layer": [...], "scores": [[...]] when scored, "calibration": {...}}.
/// Errors: those of passes::parse_head_list, quant::score_heads / select_heads and
/// passes::prune_attention_heads (edgemm/tools/prune.h, edgemm/tools/head_scoring.h); kInvalidArgument for calibration
/// files that are neither .npy nor images, or images without a CLIP package to preprocess them.
Expected<nlohmann::json> prune_heads(OnnxModel& model, const std::string& model_path, const HeadPruneArgs& args);

/// Prints the head part of a JSON report from prune_heads() as text (score table included).
void print_head_report(const nlohmann::json& j);

}  // namespace edgemm::cli
