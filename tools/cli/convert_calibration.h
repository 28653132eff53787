#pragma once
/// \file convert_calibration.h
/// The calibration samples of `edgemm convert --target` (convert_target.h): the --calib images
/// chosen, made into inputs as the model takes them (with --stage by the OCR pipeline's own
/// preprocessing, ocr_calibration.h; else stretched to the input and normalized with --mean /
/// --std), and written in the form the target's recipe gives (platforms/recipes/<target>/).

#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "convert_target.h"
#include "edgemm/status.h"
#include "edgemm/tools/calibration.h"
#include "edgemm/tools/targets.h"

namespace edgemm::cli {

/// The calibration images chosen from --calib, before anything is written.
struct CalibrationImages {
  std::vector<std::filesystem::path> images;  ///< decodable, in name order, at most --calib-count
  std::vector<std::string> skipped;           ///< "file: reason" for the undecodable ones met before
};

/// What the calibration step wrote.
struct CalibrationResult {
  int written = 0;                   ///< samples
  int images = 0;                    ///< images that gave at least one sample
  std::vector<std::string> skipped;  ///< "file: reason"
};

/// The first input's layout: NCHW when dim 1 is 1 or 3 (the convention of the ONNX exports we
/// meet), else NHWC; height, width and channels from it.
struct InputGeometry {
  bool nchw = true;
  int64_t channels = 3, height = 0, width = 0;
};

/// The geometry of `input`. Errors: kInvalidArgument unless it is a static float32 4-D input
/// with 3 channels.
Expected<InputGeometry> input_geometry(const ValueInfo& input);

/// The first `count` images of `dir` (png, jpg, jpeg, bmp; name order) that decode; those that
/// do not are skipped with the reason. Errors: kIo when `dir` is not a folder, kInvalidArgument
/// when it holds no image or none decodes.
Expected<CalibrationImages> calibration_images(const std::string& dir, int count);

/// Per-channel values given in R, G, B order, in the model's channel order.
std::array<float, 3> model_order(std::array<float, 3> v, bool bgr);

/// The calibration inputs of an image as the model takes them (float32, the model's layout and
/// channel order, normalized): with --stage, every input the OCR pipeline feeds the stage's
/// model, `model` standing in for it (ocr_calibration.h); else one image stretched to the
/// input's H x W (aspect ratio not kept) and normalized with --mean / --std. Errors: those of
/// ocr_stage_feeds.
Expected<quant::FeedSource> model_feed_source(const TargetConvertArgs& args, const InputGeometry& g,
                                              const std::string& input, const std::string& model);

/// The channel order of the recipe's samples ("RGB" or "BGR"): its fixed order, or the model's
/// ("model").
std::string sample_color(const targets::CalibrationFormat& f, bool bgr);

/// Writes the samples `source` makes of the chosen images, in the recipe's form `f`, to
/// `out`/f.dir (numbered, so that a.png and a.jpg stay two samples), and the recipe's list file:
/// image_list 8-bit PNGs of the pixels the inputs were normalized from (true colors: the vendor
/// tool normalizes them itself), raw_uint8 those pixels, raw_float32 and npy the inputs, each in
/// sample_color's order. With --stage an image gives one sample per model run (a line crop each
/// for cls and rec); an image in which the pipeline finds no text line gives none and is listed
/// as skipped. Nothing is written without --calib or for format "none". Errors: kInternal when
/// a sample's shape is not `input`'s, those of `source`, kIo for the writes.
Expected<CalibrationResult> write_calibration(const TargetConvertArgs& args, const targets::CalibrationFormat& f,
                                              const CalibrationImages& chosen, const InputGeometry& g,
                                              const ValueInfo& input, const quant::FeedSource& source,
                                              const std::filesystem::path& out);

/// How the calibration inputs are made, for the README, report.json and the warning without
/// --stage ("the OCR pipeline's own (--stage ocr-det): ...", "assumed, ...: stretched ...").
std::string preprocessing_text(const TargetConvertArgs& args, const ValueInfo& input);

}  // namespace edgemm::cli
