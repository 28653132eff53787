#pragma once
/// \file ocr.h
/// PP-OCR text recognition pipeline: detection (DB), optional angle classifier, and CTC
/// recognition, all on edgemm Inferencers. Defaults follow PaddleOCR's published inference
/// settings for PP-OCRv4 (tools/infer/utility.py, ppocr/postprocess/db_postprocess.py,
/// rec_postprocess.py); see docs/ocr.md.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "edgemm/image_view.h"
#include "edgemm/inferencer.h"
#include "edgemm/status.h"

namespace edgemm::ocr {

/// How a detected box is scored against the probability map (PaddleOCR `det_db_score_mode`).
enum class ScoreMode {
  kFast,  ///< mean probability inside the box's axis-aligned bounding rectangle, masked by the box
  kSlow,  ///< mean probability inside the contour polygon itself
};

/// det's input normalization, (pixel / 255 - mean) / std per channel of the B, G, R image: the
/// ImageNet values, applied to OpenCV's channel order as PaddleOCR's NormalizeImage does.
inline constexpr std::array<float, 3> kDetMean = {0.485f, 0.456f, 0.406f};
inline constexpr std::array<float, 3> kDetStd = {0.229f, 0.224f, 0.225f};

/// cls and rec input normalization, (pixel / 255 - mean) / std on every channel: to [-1, 1].
inline constexpr std::array<float, 3> kLineMean = {0.5f, 0.5f, 0.5f};
inline constexpr std::array<float, 3> kLineStd = {0.5f, 0.5f, 0.5f};

/// File names of the four model files inside `OcrOptions::models_dir`.
struct OcrModelFiles {
  std::string det = "ch_PP-OCRv4_det_infer.onnx";
  std::string cls = "ch_ppocr_mobile_v2.0_cls_infer.onnx";
  std::string rec = "ch_PP-OCRv4_rec_infer.onnx";
  /// More recognizers of the same model with static input widths, for runtimes that need
  /// fixed shapes (NPUs: `edgemm convert REC --fix-shape x=1,3,48,W` for a few W such as 320,
  /// 640, 960). Each line goes to the recognizer of smallest static width that holds it at 48
  /// pixels high (`rec` too, when it is static; a dynamic one holds any line), instead of
  /// being squeezed into one width; a line wider than all of them goes to the widest.
  std::vector<std::string> rec_buckets;
  std::string dictionary = "ppocr_keys_v1.txt";  ///< UTF-8, one character a line
};

/// Pipeline settings. Defaults are PaddleOCR's for PP-OCRv4 except where a field says otherwise
/// (docs/ocr.md lists each difference and its measurement).
/// RuntimeOptions apply to each of the three models; `threads` also sets OpenCV's threads
/// (cv::setNumThreads, process-wide). Models with static input shapes (`edgemm convert
/// --fix-shape`) are fed at exactly those shapes: the image is letterboxed into det's height ×
/// width (det_preprocess), crops are cut to rec/cls's width and batched by their batch size.
struct OcrOptions : RuntimeOptions {
  std::string models_dir;  ///< folder holding `files` (scripts/setup.sh fetches models/ppocrv4)
  OcrModelFiles files;
  bool use_cls = true;  ///< run the 0°/180° angle classifier on each crop
  /// With the classifier: find whether the whole image is turned by 90°, 180° or 270° (from the
  /// shapes of its lines and the classifier's votes on them) and read it upright; the lines'
  /// polygons are still given in the image as passed (see OcrResult::orientation).
  bool detect_orientation = true;

  // Detection pre-processing.
  int det_limit_side = 960;  ///< longer side limited to this (pixels), then each side rounded to a multiple of 32

  // DB post-processing (Liao et al., "Real-time Scene Text Detection with Differentiable Binarization", 2020).
  float det_threshold = 0.3f;  ///< probability at which a pixel counts as text
  float box_threshold = 0.6f;  ///< boxes whose score is below this are dropped
  int max_candidates = 1000;   ///< at most this many contours are considered
  float unclip_ratio = 1.5f;   ///< offset distance = area × ratio / perimeter
  ScoreMode score_mode = ScoreMode::kFast;
  int min_box_side = 3;  ///< boxes with a shorter side (pixels of the map) are dropped

  // Reading order.
  float line_tolerance = 10.0f;  ///< boxes whose top y differ by less (pixels) are on one line

  // Angle classifier.
  /// A crop classified 180° with more than this probability is also read turned by 180°; the
  /// more confident of the two readings is kept (OcrLine::rotated_180).
  float cls_threshold = 0.9f;
  int cls_batch = 6;

  // Recognition.
  int rec_batch = 6;                 ///< crops per rec run, grouped by aspect ratio
  float rec_score_threshold = 0.5f;  ///< lines whose mean CTC confidence is below this are dropped
  /// CTC decoding puts a space between two ASCII characters when a blank step between them
  /// gives the space class at least this probability (PaddleOCR: 1, argmax only). 0.2 lowers
  /// CER on data/ocr_set from 2.74 % to 1.58 % and on the document set from 2.58 % to 2.37 %
  /// (docs/ocr.md). In [0, 1]; 1 decodes as PaddleOCR does.
  float space_threshold = 0.2f;

  /// Called with every input tensor the pipeline feeds a model, just before that run, and the
  /// model's stage ("det", "cls", "rec"). Calibration for quantization (`edgemm quantize
  /// --stage`) records them, so that it sees exactly what inference sees. Runs on the thread
  /// that runs the pipeline; the tensor is valid during the call only. Empty: none.
  std::function<void(const std::string& stage, const Tensor& input)> input_observer;
};

/// A point in image pixels (x right, y down), origin at the top-left corner of the image.
struct Point {
  float x = 0;
  float y = 0;
};

/// One recognized text line.
struct OcrLine {
  /// Quadrilateral in original-image pixels, clockwise from the top-left corner of the box as
  /// detected in the upright image (OcrResult::orientation).
  std::array<Point, 4> polygon;
  std::string text;          ///< UTF-8
  float score = 0;           ///< mean CTC confidence of the kept time steps, in [0, 1]
  float box_score = 0;       ///< DB score of the detected box, in [0, 1]
  bool rotated_180 = false;  ///< the line was read turned by 180° relative to the (upright) image
};

/// Wall-clock time of each stage of one image, in milliseconds.
struct OcrTimings {
  double decode_ms = 0;  ///< reading and decoding the image file (0 for in-memory images)
  double det_ms = 0;     ///< det pre-processing and inference
  double post_ms = 0;    ///< DB post-processing, reading order and crops
  double cls_ms = 0;     ///< angle classifier (0 when disabled)
  double rec_ms = 0;     ///< recognition and CTC decoding
  double total_ms = 0;
};

/// Result for one image: lines in reading order.
struct OcrResult {
  int width = 0;  ///< original image size in pixels
  int height = 0;
  /// Clockwise degrees (0, 90, 180 or 270) by which the image was found turned from upright
  /// (OcrOptions::detect_orientation); its lines were read from the upright form, and their
  /// polygons mapped back into the image with their corners in the text's own order: the first
  /// corner is the text's top-left, which for 180° lies at the box's bottom-right on screen.
  int orientation = 0;
  std::vector<OcrLine> lines;
  OcrTimings timings;
};

/// The loaded pipeline. Thread safety: run()/run_file() may be called from several threads at
/// once (the underlying Inferencers are thread-safe).
class OcrPipeline {
 public:
  virtual ~OcrPipeline() = default;

  /// Loads det, cls (when enabled) and rec from `options.models_dir` and the dictionary.
  /// Errors: kIo (missing model or dictionary file), kInvalidModel, kInvalidArgument (bad
  /// option value, dictionary size inconsistent with the rec model's classes).
  static Expected<std::unique_ptr<OcrPipeline>> create(const OcrOptions& options);

  /// Reads an image file (any format OpenCV decodes: PNG incl. 16-bit, JPEG, BMP, TIFF, WebP;
  /// gray, RGB or RGBA) and recognizes its text.
  /// Errors: kIo (missing/unreadable file), kInvalidArgument (empty, corrupt or non-image
  /// file, image larger than 2^28 pixels).
  virtual Expected<OcrResult> run_file(const std::string& path) const = 0;

  /// Recognizes the text of an in-memory image. Errors: kInvalidArgument for an empty or
  /// inconsistent view.
  virtual Expected<OcrResult> run(const ImageView& image) const = 0;

  virtual const OcrOptions& options() const = 0;

  /// The loaded models by stage ("det", "cls" when enabled, "rec"): their backend and node
  /// placement (Inferencer::backend, Inferencer::placement).
  virtual std::vector<std::pair<std::string, const Inferencer*>> models() const = 0;
};

/// Writes `image_path` with every line of `result` drawn on it: its polygon outlined and its
/// 1-based reading-order number at the top-left corner. The format follows the extension of
/// `output_path` (.png, .jpg, ...); the file is written whole or not at all. Errors: those of run_file() for the input,
/// kIo when the output cannot be written, kInvalidArgument when the image size differs from the result's.
Status draw_result(const std::string& image_path, const OcrResult& result, const std::string& output_path);

}  // namespace edgemm::ocr
