#pragma once
/// \file convert_target.h
/// `edgemm convert --target NAME MODEL -o DIR`: the deployment folder for a vendor NPU
/// converter (docs/platforms.md): the model rewritten by targets::plan_conversion, the target
/// report before and after, the verification of the rewritten model against the original
/// (edgemm and ONNX Runtime), calibration samples in the vendor's form, and the converter
/// recipe filled in from platforms/recipes/<target>/. Nothing vendor-side runs here.

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "convert_verify.h"
#include "edgemm/status.h"

namespace edgemm::cli {

/// The options of `convert --target`.
struct TargetConvertArgs {
  std::string model;
  std::string output_dir;
  std::string target;
  std::string platforms;                      ///< profile folder ("" = platforms/)
  std::map<std::string, Shape> fixed_shapes;  ///< --fix-shape, parsed
  std::string calib;                          ///< folder of calibration images ("" = none)
  int calib_count = 64;                       ///< at most this many images, in name order
  /// "det", "cls" or "rec" (--stage ocr-det|ocr-cls|ocr-rec): the model is that PP-OCR stage, and
  /// its calibration inputs are what the OCR pipeline feeds it (ocr_calibration.h: det
  /// letterboxed, cls / rec on line crops); the caller sets mean/std/bgr to the stage's
  /// (ocr_stage_normalization). "" = each image stretched to the input (stretched_input).
  std::string stage;
  std::string ocr_models;  ///< float PP-OCR models for --stage ("" = models/ppocrv4)
  int threads = 1;         ///< for the OCR pipeline of --stage
  /// Per-channel normalization of the model's input, in 0-255 pixel units, RGB order:
  /// input = (pixel - mean) / std.
  std::array<float, 3> mean = {0, 0, 0};
  std::array<float, 3> std = {1, 1, 1};
  /// --mean / --std were given, or --stage set them (else the defaults above; --calib then is
  /// refused, as the samples would be raw pixels the model was not trained on).
  bool normalization_given = false;
  /// The model takes B, G, R channels (PaddleOCR and OpenCV-trained models): the float samples
  /// edgemm normalizes and the --int8 feeds are written in that order (mean/std stay RGB-ordered).
  bool bgr = false;
  /// Also write model.int8.onnx: int8 QDQ (quant::quantize_int8, every eligible node, 8-bit
  /// per-channel weights) calibrated on the --calib images preprocessed as the samples are.
  bool int8 = false;
  std::string int8_method = "mse";  ///< activation ranges: minmax, percentile, entropy or mse
  bool json = false;
};

/// Writes the folder; returns the exit code (0, or 1 when the verification fails) or an error:
/// those of the profile and recipe loaders, plan_conversion, convert_model, the OCR pipeline of
/// --stage and the verification setup; kInvalidArgument when DIR is an existing file or would
/// overwrite the model or its external data, or --calib is used without normalization (no
/// --mean/--std/--stage) or --stage without --calib; kIo for files that cannot be written.
/// `verify` null skips the verification.
Expected<int> convert_for_target(const TargetConvertArgs& args, const VerifyOptions* verify);

}  // namespace edgemm::cli
