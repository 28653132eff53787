#pragma once
/// \file ocr_options.h
/// The OCR pipeline options that `edgemm ocr` and `edgemm eval ocr` share.

#include <CLI/CLI.hpp>
#include <string>

#include "edgemm/pipelines/ocr.h"

namespace edgemm::cli {

/// --models, --no-cls, --threads and --det-limit-side, and the pipeline options they set.
struct OcrPipelineArgs {
  std::string models;  ///< empty: default_ocr_models_dir()
  bool no_cls = false;
  ocr::OcrOptions options;

  /// `options` with models_dir and use_cls filled in from --models and --no-cls.
  ocr::OcrOptions resolved() const;
};

/// Registers the shared options on `cmd`, writing into `args` (which must outlive parsing).
void add_ocr_pipeline_options(CLI::App* cmd, OcrPipelineArgs& args);

}  // namespace edgemm::cli
