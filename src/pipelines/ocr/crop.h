#pragma once
/// \file crop.h
/// Reading order of detected boxes and perspective crops of text lines, as PaddleOCR's
/// TextSystem does it (tools/infer/predict_system.py sorted_boxes, utility.py
/// get_rotate_crop_image).

#include <opencv2/core.hpp>
#include <vector>

#include "pipelines/ocr/det.h"

namespace edgemm::ocr {

/// Reorders boxes for reading: by the top-left corner's y (then x); then, walking down the
/// list, a box moves before its predecessor while their top-left y differ by less than
/// `line_tolerance` pixels and it lies further left — so boxes on one line read left to right.
void sort_reading_order(std::vector<DetectedBox>& boxes, float line_tolerance);

/// Crops `quad` out of an 8-bit BGR image with a perspective warp (bicubic, border replicated)
/// to a width × height upright image, where width = the longer of the top/bottom edges and
/// height = the longer of the left/right edges (truncated to whole pixels, at least 1). A
/// crop at least 1.5 times taller than wide is rotated 90° counter-clockwise (vertical text).
cv::Mat crop_text_region(const cv::Mat& bgr, const Quad& quad);

}  // namespace edgemm::ocr
