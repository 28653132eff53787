#pragma once
/// \file ocr_options.h
/// The OCR pipeline options that `edgemm ocr` and `edgemm eval ocr` share.

#include <CLI/CLI.hpp>
#include <string>

#include "cli_common.h"
#include "edgemm/pipelines/ocr.h"

namespace edgemm::cli {

/// --models, --no-cls, --no-orientation, --threads, the detection, classifier and recognition
/// thresholds and the backend options, and the pipeline options they set.
struct OcrPipelineArgs {
  std::string models;  ///< empty: default_ocr_models_dir()
  bool no_cls = false;
  bool no_orientation = false;
  bool no_optimize = false;
  std::string score_mode = "fast";
  ocr::OcrOptions options;
  BackendArgs backend;

  /// `options` with models_dir, use_cls, detect_orientation, score_mode and the backend filled
  /// in from --models, --no-cls, --no-orientation, --score-mode and
  /// --backend/--device/--precision/--plugin.
  ocr::OcrOptions resolved() const;
};

/// Registers the shared options on `cmd`, writing into `args` (which must outlive parsing).
void add_ocr_pipeline_options(CLI::App* cmd, OcrPipelineArgs& args);

}  // namespace edgemm::cli
