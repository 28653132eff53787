#pragma once
/// \file det.h
/// Text detection with DB (Liao et al., "Real-time Scene Text Detection with Differentiable
/// Binarization", AAAI 2020): PP-OCR's pre-processing (DetResizeForTest, NormalizeImage) and
/// post-processing (DBPostProcess in ppocr/postprocess/db_postprocess.py).

#include <array>
#include <opencv2/core.hpp>
#include <vector>

#include "edgemm/pipelines/ocr.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm::ocr {

/// A quadrilateral in pixels, clockwise from the top-left corner.
using Quad = std::array<Point, 4>;

/// Size the det network sees: the longer side limited to `limit_side` (never enlarged), then
/// each side rounded to the nearest multiple of 32, halves to even as Python's round() does
/// (at least 32). PaddleOCR DetResizeForTest with limit_type "max".
cv::Size det_input_size(int width, int height, int limit_side);

/// The top-left part of a static det input of `fixed` pixels that an image of `image` pixels
/// fills when letterboxed: scaled by min(fixed.width / width, fixed.height / height), aspect ratio
/// kept, each side rounded and at least 1 pixel.
cv::Size det_letterbox_size(cv::Size image, cv::Size fixed);

/// Resizes (bilinear) an 8-bit BGR image to det_input_size, and normalizes it with ImageNet
/// mean/std in BGR channel order → float tensor [1, 3, H', W']. When both sides of `fixed_size`
/// are positive (a det model with a static input shape) the image is letterboxed instead: resized
/// to det_letterbox_size at the top-left of a `fixed_size` input padded with the mean colour
/// (0 after normalization). On the committed set with det fixed at 960×960, letterboxing gives a
/// CER of 5.4 % (dynamic det: 5.1 %); stretching to the fixed shape, as PaddleOCR's
/// DetResizeForTest with image_shape does, gave 8.6 % (upside-down photos 20 % instead of 11 %).
/// Errors: kOutOfMemory when the tensor cannot be allocated.
Expected<Tensor> det_preprocess(const cv::Mat& bgr, int limit_side, cv::Size fixed_size = {});

/// DB post-processing parameters (see OcrOptions for their meaning and defaults).
struct DbParams {
  float threshold = 0.3f;
  float box_threshold = 0.6f;
  int max_candidates = 1000;
  float unclip_ratio = 1.5f;
  ScoreMode score_mode = ScoreMode::kFast;
  int min_side = 3;
};

/// A detected text box in original-image pixels and its DB score.
struct DetectedBox {
  Quad quad;
  float score = 0;
};

/// Boxes from a probability map `prob` (CV_32F, map pixels, values in [0, 1]) for an image of
/// `image_size` pixels: binarize at `threshold`, take the outer points of every connected
/// contour (at most max_candidates), fit a minimum-area rectangle, drop it if its shorter
/// side < min_side or its score < box_threshold, expand it by unclip(), refit, drop if the
/// shorter side < min_side + 2, scale to the image, round and clip to
/// [0, width−1] × [0, height−1], and drop boxes narrower or lower than 4 pixels (PaddleOCR
/// filter_tag_det_res). `content` is the top-left part of the map that shows the image (map
/// pixels; empty: all of it, as without letterboxing). Boxes come in contour order (see
/// sort_reading_order).
std::vector<DetectedBox> db_postprocess(const cv::Mat& prob, cv::Size image_size, const DbParams& params,
                                        cv::Size content = {});

/// Corners of the minimum-area rectangle around `points`, ordered as PaddleOCR's
/// get_mini_boxes does (top-left, top-right, bottom-right, bottom-left by x then y), and the
/// rectangle's shorter side in pixels.
std::pair<Quad, float> min_area_quad(const std::vector<cv::Point2f>& points);

/// Polygon expansion ("unclip") of DB: offsets `quad` outwards by
/// distance = area × ratio / perimeter with round joins (Clipper ClipperOffset, arc tolerance
/// 0.25, integer coordinates as pyclipper uses). Returns the points of the expanded
/// polygon(s); empty for a degenerate quad.
std::vector<cv::Point2f> unclip(const Quad& quad, float ratio);

/// Mean of `prob` over the pixels inside `polygon` (map pixels), restricted to the polygon's
/// bounding rectangle clipped to the map (PaddleOCR box_score_fast / box_score_slow).
float polygon_mean_score(const cv::Mat& prob, const std::vector<cv::Point2f>& polygon);

}  // namespace edgemm::ocr
