#pragma once
/// \file ocr_calibration.h
/// Model inputs made by the OCR pipeline's own preprocessing, for calibration (`edgemm quantize
/// --stage` and `edgemm convert --target --stage`): the float PP-OCR pipeline runs on each image
/// and the inputs it feeds one stage's model are recorded (OcrOptions::input_observer), so that
/// calibration sees exactly what inference sees: det letterboxed into a static input, cls and
/// rec on text-line crops 48 pixels high.

#include <array>
#include <string>

#include "edgemm/status.h"
#include "edgemm/tools/calibration.h"

namespace edgemm::cli {

/// "det", "cls" or "rec" for `stage` ocr-det, ocr-cls or ocr-rec. Errors: kInvalidArgument
/// naming the value.
Expected<std::string> ocr_stage(const std::string& stage);

/// Where the stage inputs come from.
struct OcrStageOptions {
  std::string stage;       ///< "det", "cls" or "rec" (ocr_stage)
  std::string models_dir;  ///< the float PP-OCR models ("" = default_ocr_models_dir())
  /// A model file that replaces the stage's model in the pipeline ("" = the folder's), so that
  /// the pipeline feeds it at its own static input shape (det letterboxed into H x W, crops cut
  /// to the rec / cls width and batch).
  std::string stage_model;
  int threads = 0;  ///< as OcrOptions::threads
};

/// A source that gives, for an image sample, every input the pipeline feeds the stage's model
/// (det: one per image; cls and rec: one per batch of text-line crops, none when no line is
/// found), named `input`. Errors: those of OcrPipeline::create (missing model files, a
/// stage model whose static line height is not 48); the source returns those of run_file.
Expected<quant::FeedSource> ocr_stage_feeds(const OcrStageOptions& options, const std::string& input);

/// A stage's input normalization, input = (pixel - mean) / std with 8-bit pixels, per channel of
/// the model's B, G, R input (PP-OCR models take OpenCV's channel order): det ImageNet mean/std
/// (applied to B, G, R as PaddleOCR's NormalizeImage does), cls and rec 127.5 / 127.5.
struct StageNormalization {
  std::array<float, 3> mean_bgr, std_bgr;  ///< 0-255 units
};
StageNormalization ocr_stage_normalization(const std::string& stage);

}  // namespace edgemm::cli
